use super::*;
use crate::reproduce::report::{Delta, Kind, Source};

const VMS: &str = include_str!("../../../tests/fixtures/reproduce/vms-anon-w-seq.txt");
const WIS_QUOTED: &str = include_str!("../../../tests/fixtures/reproduce/wis-thread-quoted.txt");
const WIS_PROCESS: &str = include_str!("../../../tests/fixtures/reproduce/wis-process.txt");
const PFT: &str = include_str!("../../../tests/fixtures/reproduce/pft.txt");
const PFT_QP: &[u8] = include_bytes!("../../../tests/fixtures/reproduce/pft-qp.eml");
const JOB: &str = include_str!("../../../tests/fixtures/reproduce/will-it-scale.job.yaml");

fn row<'a>(t: &'a Test, name: &str) -> &'a Row {
    t.rows
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name} in {:?}", t.rows))
}

#[test]
fn the_current_wording_gives_headline_commits_machine_and_parameters() {
    let r = read(VMS).unwrap();
    assert_eq!(r.source, Source::Mail);
    let h = r.headline.as_ref().unwrap();
    assert_eq!(h.metric, "vm-scalability.throughput");
    assert_eq!(h.percent, -21.4);
    assert_eq!(h.kind, Kind::Regression);
    let head = r.head.as_ref().unwrap();
    assert_eq!(head.id, "5a1b2c3d4e5f60718293a4b5c6d7e8f901234567");
    assert_eq!(
        head.subject.as_deref(),
        Some("mm: batch the anonymous fault's counter update")
    );
    let base = r.base.as_ref().unwrap();
    assert_eq!(base.id, "0f1e2d3c4b");
    assert_eq!(
        base.subject.as_deref(),
        Some("mm: tidy the fault path's comments")
    );
    let t = &r.tests[0];
    assert_eq!(t.testcase(), Some("vm-scalability"));
    assert_eq!(t.param("test"), Some("anon-w-seq"));
    assert_eq!(t.param("size"), Some("512G"));
    assert_eq!(t.param("runtime"), Some("300s"));
    assert_eq!(t.params.len(), 4, "{:?}", t.params);
    let m = t.machine.as_ref().unwrap();
    assert_eq!((m.threads, m.sockets), (Some(224), Some(2)));
    assert_eq!(m.memory, Some(256 << 30));
    assert_eq!(
        m.cpu.as_deref(),
        Some("Intel(R) Xeon(R) Platinum 8480CTDX (Sapphire Rapids)")
    );
    assert_eq!(t.param("tbox_group"), Some("lkp-spr-2sp4"));
    assert_eq!(t.param("kconfig"), Some("x86_64-rhel-9.4"));
    assert_eq!(t.axes.len(), 9);
}

#[test]
fn every_row_is_read_with_its_stddevs_and_change() {
    let r = read(VMS).unwrap();
    let t = &r.tests[0];
    assert_eq!(t.rows.len(), 17, "{:#?}", t.rows);
    assert!(!t.cut);
    let sys = row(t, "vm-scalability.time.system_time");
    assert_eq!((sys.base, sys.head), (2841.0, 3540.0));
    assert_eq!((sys.base_stddev, sys.head_stddev), (Some(3.0), Some(2.0)));
    assert_eq!(sys.change, Some(Delta::Percent(24.6)));
    let tp = row(t, "vm-scalability.throughput");
    assert_eq!((tp.base_stddev, tp.head_stddev), (None, None));
    let alloc = row(t, "proc-vmstat.pgalloc_normal");
    assert_eq!((alloc.base, alloc.head), (2.382e9, 1.931e9));
    assert_eq!(row(t, "meminfo.Active(anon)").head, 2232886.0);
    let wide = row(t, "perf-sched.wait_time.max.ms.__cond_resched.clear_page");
    assert_eq!(wide.change, Some(Delta::Percent(2.1e5)));
    assert_eq!(wide.head_stddev, Some(203.0));
    assert_eq!(
        row(t, "sched_debug.cpu.nr_uninterruptible.min").base,
        -36.17
    );
    // The fail:runs block is not a row.
    assert!(t.rows.iter().all(|r| !r.name.starts_with("dmesg")));
}

#[test]
fn rows_of_percentages_carry_an_absolute_delta() {
    let r = read(VMS).unwrap();
    let t = &r.tests[0];
    let miss = row(t, "perf-stat.i.cache-miss-rate%");
    assert_eq!(miss.change, Some(Delta::Absolute(0.1)));
    assert_eq!(
        row(t, "mpstat.cpu.all.sys%").change,
        Some(Delta::Absolute(8.8))
    );
    let pp = row(
        t,
        "perf-profile.calltrace.cycles-pp.do_anonymous_page.__handle_mm_fault",
    );
    assert_eq!(pp.change, Some(Delta::Absolute(-10.7)));
    assert_eq!((pp.base_stddev, pp.head_stddev), (Some(100.0), Some(205.0)));
}

#[test]
fn an_in_addition_box_is_a_test_with_its_own_table() {
    let r = read(VMS).unwrap();
    assert_eq!(r.tests.len(), 2);
    let b = &r.tests[1];
    assert_eq!(b.testcase(), Some("will-it-scale"));
    let c = b.change.as_ref().unwrap();
    assert_eq!(c.metric, "will-it-scale.per_thread_ops");
    // Printed unsigned; the table's row gives the sign.
    assert_eq!(c.percent, -9.6);
    assert_eq!(b.param("mode"), Some("thread"));
    assert_eq!(b.param("nr_task"), Some("50%"));
    assert_eq!(b.param("test"), Some("page_fault1"));
    assert_eq!(b.machine.as_ref().unwrap().threads, Some(104));
    assert_eq!(b.rows.len(), 3);
    assert_eq!(row(b, "will-it-scale.per_thread_ops").base, 277370.0);
    assert_eq!(b.param("tbox_group"), Some("lkp-skl-fpga01"));
}

#[test]
fn the_older_wording_quoted_twice_reads_the_same() {
    let r = read(WIS_QUOTED).unwrap();
    let h = r.headline.as_ref().unwrap();
    assert_eq!(
        (h.metric.as_str(), h.percent),
        ("will-it-scale.per_thread_ops", -37.0)
    );
    let t = &r.tests[0];
    assert_eq!(t.testcase(), Some("will-it-scale"));
    assert_eq!(t.param("mode"), Some("thread"));
    assert_eq!(t.param("nr_task"), Some("16"));
    assert_eq!(t.param("ucode"), Some("0x700001c"));
    assert_eq!(t.params.len(), 5, "{:?}", t.params);
    let m = t.machine.as_ref().unwrap();
    assert_eq!((m.threads, m.sockets), (Some(144), None));
    assert_eq!(m.memory, Some(128 << 30));
    assert_eq!(
        m.cpu.as_deref(),
        Some("Intel(R) Xeon(R) Gold 5318H CPU @ 2.50GHz")
    );
    assert_eq!(r.base.as_ref().unwrap().id, "badc0de123");
    assert_eq!(
        r.head.as_ref().unwrap().id,
        "c0ffee1234567890abcdef0123456789abcdef01"
    );
    assert_eq!(t.rows.len(), 4);
    assert_eq!(
        row(t, "mpstat.cpu.all.sys%").change,
        Some(Delta::Absolute(3.2))
    );
    // The reply's own words after the table do not make it cut.
    assert!(!t.cut);
}

#[test]
fn an_unsigned_improvement_takes_its_sign_from_the_row() {
    let r = read(WIS_PROCESS).unwrap();
    let h = r.headline.unwrap();
    assert_eq!((h.percent, h.kind), (11.7, Kind::Improvement));
    let t = &r.tests[0];
    assert_eq!(t.param("mode"), Some("process"));
    assert_eq!(
        row(t, "will-it-scale.time.system_time").change,
        Some(Delta::Percent(-8.3))
    );
}

#[test]
fn a_cut_off_table_keeps_the_rows_before_the_cut() {
    let at = WIS_PROCESS
        .find("  8.07e+08           +11.6%  9.006e+08        will-it")
        .unwrap();
    // Cut inside a row: the rows before it stay, the partial one is dropped.
    let cut = &WIS_PROCESS[..at + 30];
    let r = read(cut).unwrap();
    let t = &r.tests[0];
    assert_eq!(t.rows.len(), 3, "{:?}", t.rows);
    assert!(t.cut);
    // Cut at a row's end: every row whole, still cut.
    let r = read(&WIS_PROCESS[..at - 1]).unwrap();
    assert_eq!(r.tests[0].rows.len(), 3);
    assert!(r.tests[0].cut);
    assert!(!read(WIS_PROCESS).unwrap().tests[0].cut);
}

#[test]
fn crlf_tabs_and_bad_bytes_read_as_the_plain_text() {
    let plain = read(WIS_PROCESS).unwrap();
    let crlf = WIS_PROCESS.replace('\n', "\r\n");
    assert_eq!(read(&crlf).unwrap(), plain);
    let mut bytes = WIS_PROCESS
        .replace("Hello,", "Hello \u{e9}t\u{e9},")
        .into_bytes();
    // Latin-1 bytes, not UTF-8, in the prose and at the end of the text.
    bytes.extend_from_slice(b"\n\xe9\xff\xfe > \xc3\n");
    let r = read_bytes(&bytes).unwrap();
    assert_eq!(r.tests, plain.tests);
    let tabbed = WIS_PROCESS.replace("             \\", "\t\t\\");
    assert_eq!(read(&tabbed).unwrap().tests, plain.tests);
}

#[test]
fn a_job_yaml_gives_the_test_its_box_and_one_commit() {
    let r = read(JOB).unwrap();
    assert_eq!(r.source, Source::JobYaml);
    assert!(r.headline.is_none() && r.base.is_none());
    assert_eq!(
        r.head.as_ref().unwrap().id,
        "57efa1fe5957694fa541aa11bb22cc33dd44ee55"
    );
    let t = &r.tests[0];
    assert_eq!(t.testcase(), Some("will-it-scale"));
    assert_eq!(
        t.params,
        vec![
            ("nr_task".to_string(), "50%".to_string()),
            ("mode".into(), "thread".into()),
            ("test".into(), "page_fault1".into()),
        ]
    );
    let m = t.machine.as_ref().unwrap();
    assert_eq!(
        (m.threads, m.nodes, m.memory),
        (Some(96), Some(2), Some(256 << 30))
    );
    assert_eq!(m.name.as_deref(), Some("lkp-icl-2sp1"));
    assert_eq!(t.param("kconfig"), Some("x86_64-rhel-8.3"));
    assert_eq!(t.param("cpufreq_governor"), Some("performance"));
    assert_eq!(t.param("compiler"), Some("gcc-9"));
    // Quoted in a reply, it reads the same.
    let quoted: String = JOB.lines().map(|l| format!("> {l}\n")).collect();
    assert_eq!(read(&quoted).unwrap(), r);
}

#[test]
fn text_that_is_no_report_is_refused_by_name() {
    for text in ["", "hello\nworld\n", "\u{0}\u{1}>>>>", "| a | b |\n=====\n"] {
        assert_eq!(read(text), Err(ReadError::NotAReport), "{text:?}");
    }
    let e: crate::error::Error = ReadError::NotAReport.into();
    assert!(matches!(e, crate::error::Error::Input(m) if m.contains("job.yaml")));
}

#[test]
fn a_report_cut_before_its_parameters_is_refused() {
    let at = WIS_PROCESS.find("testcase:").unwrap();
    let r = read(&WIS_PROCESS[..at]);
    assert!(
        matches!(r, Err(ReadError::NoTestcase { ref found }) if found.contains("per_process_ops")),
        "{r:?}"
    );
    let msg = r.unwrap_err().to_string();
    assert!(
        msg.contains("cut before") && msg.contains("whole mail"),
        "{msg}"
    );
}

#[test]
fn the_first_report_of_an_mbox_is_read() {
    let mbox = format!(
        "From robot@example.com Tue Nov  3 10:12:44 2026\n{WIS_PROCESS}\n\
         From someone@example.com Tue Nov  3 11:00:00 2026\nSubject: Re: it\n\nThanks.\n"
    );
    assert_eq!(read(&mbox).unwrap().tests, read(WIS_PROCESS).unwrap().tests);
}

#[test]
fn a_quoted_printable_mail_reads_as_the_text_it_encodes() {
    // The fixture is pft.txt encoded (soft breaks inside the headline, a
    // commit's subject and a row's name; `=3D`, `=C2=B1`) under headers.
    let raw = String::from_utf8_lossy(PFT_QP);
    assert!(raw.contains("=C2=B1") && raw.contains("per_c=\n"), "{raw}");
    let qp = read_bytes(PFT_QP).unwrap();
    assert_eq!(qp, read(PFT).unwrap());
    let row = row(&qp.tests[0], "pft.faults_per_sec_per_cpu");
    assert_eq!((row.base, row.base_stddev), (512034.0, Some(2.0)));
    assert_eq!(
        qp.head.unwrap().subject.as_deref(),
        Some("mm: zero the folio before charging it")
    );
}
