//! The store attacked: a PostgreSQL server stopped in the middle of a run
//! (for a moment, and for good), refusing at the start (also a role or a
//! server that takes no writes), a URL password that must not leak, a
//! SQLite file system that fills up, fails (EIO) or turns read-only
//! (EROFS) under a run, a spool whose disk fails, two schema versions
//! meeting one store, many runs at once, and merges killed half-way. Every
//! failure's exit code is asserted: 2 before anything is measured, 1 once
//! samples are stored. The PostgreSQL faults run against a private server
//! (bench/pg-scratch.sh) so that stopping it disturbs no other test.

use crate::common;

use crate::common::{Scratch, is_root, json, ok, stderr};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Skips (outside CI) or fails (under CI) when the test cannot run here.
fn needs(ok: bool, what: &str) -> bool {
    if !ok {
        common::skip(&format!("needs {what}"));
    }
    ok
}

/// PostgreSQL is asked for: VMSCALE_TEST_PG set (always under CI).
fn postgres_wanted() -> bool {
    let set = std::env::var("VMSCALE_TEST_PG").is_ok_and(|u| !u.is_empty());
    needs(
        set,
        "VMSCALE_TEST_PG (eval \"$(bench/pg-scratch.sh)\"; .ci/run sets it)",
    )
}

/// A private throw-away PostgreSQL server, stopped and removed on drop.
struct Server {
    dir: String,
    port: u16,
}

impl Server {
    fn start(tag: u16) -> Server {
        // Apart from the shared server's ports and other helpers'.
        let from = 57000 + (std::process::id() % 400) as u16 * 8 + tag;
        let out = Command::new(repo().join("bench/pg-scratch.sh"))
            .env("PG_SCRATCH_PORT", from.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "pg-scratch: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let var = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")))
                .unwrap_or_else(|| panic!("no {name} in {text}"))
                .to_string()
        };
        let url = var("VMSCALE_TEST_PG");
        let port = url
            .rsplit_once(':')
            .and_then(|(_, p)| p.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap();
        Server {
            dir: var("PG_SCRATCH_DIR"),
            port,
        }
    }

    fn url(&self, user: &str, db: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{db}", self.port)
    }

    fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.url("postgres", "postgres"), postgres::NoTls).unwrap()
    }

    /// A new database, as a store URL.
    fn database(&self, name: &str) -> String {
        self.admin()
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        self.url("postgres", name)
    }

    fn ctl(&self, what: &str) {
        let out = Command::new(repo().join("bench/pg-scratch.sh"))
            .args([what, &self.dir])
            .output()
            .unwrap();
        assert!(out.status.success(), "pg-scratch {what}: {}", stderr(&out));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.ctl("stop");
    }
}

/// vmscale on store `db` with a private state directory (its spools).
fn vmscale(db: &str, state: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    c.args(args)
        .env("VMSCALE_DB", db)
        .env("VMSCALE_STATE_DIR", state)
        .env_remove("XDG_DATA_HOME")
        .env_remove("PGPASSWORD");
    c
}

fn spawn(mut c: Command) -> Child {
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A run interrupted (SIGINT, so it restores its knobs) if the test
/// fails before it ends.
struct Running(Option<Child>);

impl Running {
    fn wait(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = Command::new("kill")
                .args(["-INT", &c.id().to_string()])
                .status();
            let _ = c.wait();
        }
    }
}

/// Samples of a PostgreSQL store: all, and distinct (case, seq).
fn pg_samples(url: &str) -> (i64, i64) {
    // (0, 0) before the run made the tables.
    postgres::Client::connect(url, postgres::NoTls)
        .and_then(|mut c| {
            c.query_one(
                "SELECT COUNT(*), COUNT(DISTINCT (run_id, case_key, seq)) FROM samples",
                &[],
            )
        })
        .map_or((0, 0), |r| (r.get(0), r.get(1)))
}

/// Waits until `f` holds (each try a fifth of a second apart).
fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A run of `reps` samples of a command taking a tenth of a second.
fn slow_run(reps: usize) -> Vec<String> {
    [
        "run",
        "cmd",
        "--warmup",
        "0",
        "--reps",
        &reps.to_string(),
        "--",
        "sleep",
        "0.1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn runs(db: &str, state: &Path) -> Vec<serde_json::Value> {
    json(&vmscale(db, state, &["list", "--json"]).output().unwrap())
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn postgres_stopped_mid_run_stores_every_sample_once() {
    if !postgres_wanted() {
        return;
    }
    let server = Server::start(0);
    let db = server.database("midrun");
    let s = Scratch::new("pg-midrun");
    let child = spawn(vmscale(&db, &s.dir, &strs(&slow_run(30))));
    wait_for("3 samples", || pg_samples(&db).0 >= 3);
    server.ctl("down");
    std::thread::sleep(Duration::from_secs(3));
    server.ctl("up");
    let out = child.wait_with_output().unwrap();
    ok(&out);
    let err = stderr(&out);
    assert_eq!(err.matches("went away").count(), 1, "{err}");
    assert_eq!(err.matches("is back after").count(), 1, "{err}");
    assert_eq!(pg_samples(&db), (30, 30), "every sample once: {err}");
    let listed = runs(&db, &s.dir);
    assert_eq!(listed[0]["status"], "complete");
    let spools = s.dir.join("spool");
    assert_eq!(std::fs::read_dir(&spools).unwrap().count(), 0, "spool left");
}

#[test]
fn postgres_gone_for_good_leaves_a_spool_that_merge_finishes() {
    if !postgres_wanted() {
        return;
    }
    let server = Server::start(2);
    let db = server.database("gone");
    let s = Scratch::new("pg-gone");
    let child = spawn(vmscale(&db, &s.dir, &strs(&slow_run(12))));
    wait_for("2 samples", || pg_samples(&db).0 >= 2);
    server.ctl("down");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not come back"), "{err}");
    let spool: PathBuf = std::fs::read_dir(s.dir.join("spool"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .expect("a spool");
    assert!(err.contains(&spool.display().to_string()), "{err}");
    server.ctl("up");
    let before = &runs(&db, &s.dir)[0];
    assert_eq!(before["status"], "incomplete");
    let copy = s.dir.join("copy.spool");
    std::fs::copy(&spool, &copy).unwrap();
    let merged = vmscale(&db, &s.dir, &["merge", spool.to_str().unwrap()])
        .output()
        .unwrap();
    let text = ok(&merged);
    assert!(text.contains("complete"), "{text}");
    let after = &runs(&db, &s.dir)[0];
    assert_eq!(after["status"], "complete", "{after}");
    assert_eq!(after["samples"], 12);
    assert_eq!(pg_samples(&db), (12, 12));
    assert!(!spool.exists(), "the merged spool is removed");
    // A spool left behind is merged by the next run (nothing new here).
    std::fs::rename(&copy, &spool).unwrap();
    let next = vmscale(&db, &s.dir, &["run", "cmd", "--reps", "1", "--", "true"])
        .output()
        .unwrap();
    ok(&next);
    assert!(
        stderr(&next).contains(" 0 samples written"),
        "{}",
        stderr(&next)
    );
    assert!(!spool.exists(), "the next run left the spool");
    assert_eq!(
        pg_samples(&db).0,
        12 + 2,
        "the next run's warm-up and sample"
    );
}

const PASSWORD: &str = "Pw-s3cret-4711";

#[test]
fn postgres_refusals_exit_2_before_measuring_and_the_password_never_shows() {
    if !postgres_wanted() {
        return;
    }
    let server = Server::start(4);
    let mut admin = server.admin();
    admin
        .batch_execute(&format!(
            "CREATE ROLE pw LOGIN PASSWORD '{PASSWORD}'; CREATE ROLE tls LOGIN;"
        ))
        .unwrap();
    admin
        .batch_execute("CREATE DATABASE pwdb OWNER pw")
        .unwrap();
    // Passwords for `pw`, TLS only for `tls`, ahead of the trust lines.
    let hba: String = admin
        .query_one("SHOW hba_file", &[])
        .unwrap()
        .get::<_, String>(0);
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!(
            "host all pw 127.0.0.1/32 scram-sha-256\nhostssl all tls 127.0.0.1/32 trust\n\
             host all tls 127.0.0.1/32 reject\n{old}"
        ),
    )
    .unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    drop(admin);
    let s = Scratch::new("pg-refusals");
    let port = server.port;
    let free_port = port + 1000;
    let cases = [
        (
            format!("postgres://pw:{PASSWORD}@127.0.0.1:{free_port}/pwdb"),
            "nothing listens",
        ),
        (
            "postgres://pw:Wrong-pw-0815@127.0.0.1:PORT/pwdb".replace("PORT", &port.to_string()),
            "password authentication failed",
        ),
        (
            format!("postgres://pw:{PASSWORD}@127.0.0.1:{port}/nosuchdb"),
            "createdb",
        ),
        (format!("postgres://tls@127.0.0.1:{port}/pwdb"), "TLS"),
    ];
    let run = ["run", "cmd", "--warmup", "0", "--reps", "2", "--", "true"];
    for (url, says) in &cases {
        for args in [vec!["--db", url.as_str()], vec![]] {
            let mut c = vmscale(url, &s.dir, &[args.as_slice(), &run].concat());
            let out = c.output().unwrap();
            let all = format!("{}{}", common::stdout(&out), stderr(&out));
            assert_eq!(out.status.code(), Some(2), "{url}: {all}");
            assert!(all.contains(says), "{url}: {all}");
            assert!(
                !all.contains(PASSWORD) && !all.contains("Wrong-pw"),
                "{all}"
            );
        }
    }
    // Nothing was measured for nothing.
    let mut c =
        postgres::Client::connect(&server.url("postgres", "pwdb"), postgres::NoTls).unwrap();
    let tables: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'runs'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "a refused run created the store");
    // A good password on the command line: never in the process title,
    // the output, the list or the stored run.
    let url = format!("postgres://pw:{PASSWORD}@127.0.0.1:{port}/pwdb");
    let mut c = vmscale("", &s.dir, &["--db", &url]);
    c.args(slow_run(6)).env_remove("VMSCALE_DB");
    let child = spawn(c);
    let cmdline = format!("/proc/{}/cmdline", child.id());
    let mut title = String::new();
    wait_for("the run's process title", || {
        title = std::fs::read(&cmdline)
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        title.contains("pw@127.0.0.1")
    });
    assert!(!title.contains(PASSWORD), "{title}");
    let out = child.wait_with_output().unwrap();
    let mut seen = format!("{}{}", ok(&out), stderr(&out));
    for args in [&["list", "--json"][..], &["show", "last", "--json"]] {
        let o = vmscale("", &s.dir, &[&["--db", url.as_str()][..], args].concat())
            .env_remove("VMSCALE_DB")
            .output()
            .unwrap();
        seen.push_str(&ok(&o));
        seen.push_str(&stderr(&o));
    }
    for r in c_rows(
        &server,
        "SELECT command_line || machine || config || COALESCE(note, '') FROM runs",
    ) {
        seen.push_str(&r);
    }
    assert!(seen.contains("pw@127.0.0.1"), "{seen}");
    assert!(!seen.contains(PASSWORD), "the password leaked: {seen}");
}

fn c_rows(server: &Server, sql: &str) -> Vec<String> {
    let mut c =
        postgres::Client::connect(&server.url("postgres", "pwdb"), postgres::NoTls).unwrap();
    c.query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// A tmpfs of 16 MiB mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: PathBuf) -> Tmpfs {
        std::fs::create_dir_all(&at).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs"])
            .arg(&at)
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs");
        Tmpfs(at)
    }

    /// Writes a file until the file system is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        for chunk in [1 << 20, 4096, 1] {
            let buf = vec![0u8; chunk];
            while f.write_all(&buf).and_then(|()| f.sync_data()).is_ok() {}
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn sqlite_samples(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .and_then(|c| c.query_row("SELECT COUNT(*) FROM samples", [], |r| r.get(0)))
        .unwrap_or(0)
}

const STAT_INTERVAL: &str = "/proc/sys/vm/stat_interval";

/// The tests that set stat_interval: one at a time, or one would read the
/// other's variant as its original.
static KNOB: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A SQLite store on a 16 MiB file system filled in the middle of a run
/// with a knob set. (Linux refuses to remount a file system read-only
/// while a file on it is open for writing, so a read-only remount under a
/// running store only comes from the kernel itself, after an I/O error.)
#[test]
fn sqlite_store_on_a_full_file_system_stops_cleanly() {
    if !needs(
        is_root() && Path::new(STAT_INTERVAL).exists(),
        "root and a tmpfs",
    ) {
        return;
    }
    let _turn = common::machine_turn();
    let _one = KNOB.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("enospc");
    let fs = Tmpfs::mount(s.dir.join("mnt"));
    let db = fs.0.join("store.db");
    let db_s = db.to_str().unwrap();
    let state = s.dir.join("state");
    let knob = std::fs::read_to_string(STAT_INTERVAL).unwrap();
    let other = if knob.trim() == "2" { "3" } else { "2" };
    let args = [
        "run",
        "cmd",
        "--warmup",
        "0",
        "--reps",
        "100000",
        "--knob",
        &format!("stat_interval={other}"),
        "--",
        "true",
    ];
    let child = Running(Some(spawn(vmscale(db_s, &state, &args))));
    wait_for("5 samples", || sqlite_samples(&db) >= 5);
    fs.fill();
    let out = child.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(db_s) && err.contains("free of"), "{err}");
    assert_eq!(
        std::fs::read_to_string(STAT_INTERVAL).unwrap(),
        knob,
        "knob not restored"
    );
    let kept = sqlite_samples(&db);
    assert!(kept >= 5, "{kept} samples readable");
    let listed = runs(db_s, &state);
    assert_eq!(listed[0]["status"], "incomplete", "{listed:?}");
    assert_eq!(listed[0]["samples"], kept);
}

/// An ext4 image on a loop device, mounted; unmounted and detached on
/// drop. Its own failure paths break a store for real: a shutdown
/// (EXT4_IOC_SHUTDOWN, what ext4 does when its device fails: every write
/// gets EIO) and an error under `errors=remount-ro` (the kernel turns it
/// read-only: EROFS). Device-mapper's `error` target would do as well,
/// but kernels without device-mapper, like this project's development
/// guests, have no /dev/mapper/control.
struct Ext4Loop {
    dir: PathBuf,
    mnt: PathBuf,
    dev: String,
}

fn sh(cmd: &str, args: &[&str]) -> std::process::Output {
    Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

fn must(cmd: &str, args: &[&str]) -> String {
    let o = sh(cmd, args);
    assert!(o.status.success(), "{cmd} {args:?}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

impl Ext4Loop {
    /// A 64 MiB ext4 image mounted with `options`; None (skipped, or a
    /// failure under CI) without root, losetup or mkfs.ext4.
    fn new(s: &Scratch, options: &str) -> Option<Ext4Loop> {
        if !common::is_root() {
            common::skip("needs root for a loop device and a mount");
            return None;
        }
        for tool in ["losetup", "mkfs.ext4", "mount"] {
            if Command::new(tool).arg("--version").output().is_err() {
                common::skip(&format!("{tool} is missing (Debian: mount, e2fsprogs)"));
                return None;
            }
        }
        let dir = s.dir.join("disk");
        let mnt = dir.join("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        let img = dir.join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        must("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]);
        let dev = must("losetup", &["-f", "--show", img.to_str().unwrap()]);
        let disk = Ext4Loop { dir, mnt, dev };
        disk.mount(options);
        Some(disk)
    }

    fn mount(&self, options: &str) {
        must(
            "mount",
            &["-o", options, &self.dev, self.mnt.to_str().unwrap()],
        );
    }

    /// Whether the image came off its mount point.
    fn umount(&self) -> bool {
        sh("umount", &[self.mnt.to_str().unwrap()]).status.success()
    }

    /// Everything written so far on disk (syncfs).
    fn sync(&self) {
        must("sync", &["-f", self.mnt.to_str().unwrap()]);
    }

    /// EIO from now on: the file system shuts down after syncing, as ext4
    /// does when its device fails (xfstests' godown).
    fn shut_down(&self) {
        const EXT4_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587d;
        let d = std::fs::File::open(&self.mnt).unwrap();
        let flags: u32 = 0; // EXT4_GOING_FLAGS_DEFAULT: sync, then down
        // SAFETY: the fd is open and the argument points to a u32.
        let r = unsafe { libc::ioctl(d.as_raw_fd(), EXT4_IOC_SHUTDOWN, &flags) };
        assert_eq!(r, 0, "shutdown: {}", std::io::Error::last_os_error());
    }

    /// EROFS from now on: an ext4 error under errors=remount-ro.
    fn fail_read_only(&self) {
        let name = Path::new(&self.dev).file_name().unwrap().to_str().unwrap();
        let trigger = format!("/sys/fs/ext4/{name}/trigger_fs_error");
        std::fs::write(&trigger, "vmscale store_disk_faults\n")
            .unwrap_or_else(|e| panic!("{trigger}: {e}"));
    }
}

impl Drop for Ext4Loop {
    fn drop(&mut self) {
        if !self.umount() {
            let _ = sh("umount", &["-l", self.mnt.to_str().unwrap()]);
        }
        let _ = sh("losetup", &["-d", &self.dev]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn stat_interval() -> String {
    std::fs::read_to_string(STAT_INTERVAL)
        .unwrap()
        .trim()
        .to_string()
}

/// Starts a knob run on a store in the image, waits for a few samples,
/// breaks the file system with `fault`, and checks the ending; `error`
/// is the text of the errno the run must name.
fn run_through(options: &str, fault: fn(&Ext4Loop), error: &str) {
    let _turn = common::machine_turn();
    let _one = KNOB.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("disk-fault");
    let Some(disk) = Ext4Loop::new(&s, options) else {
        return;
    };
    let db = disk.mnt.join("store.db");
    let original = stat_interval();
    let other = (original.parse::<u64>().unwrap() + 1).to_string();
    let knob = format!("stat_interval={original},{other}");
    let db_s = db.to_str().unwrap();
    let state = s.dir.join("state");
    let args = [
        "run", "cmd", "--reps", "300", "--warmup", "0", "--knob", &knob,
    ];
    let args = [&args[..], &["--", "sleep", "0.05"]].concat();
    let child = Running(Some(spawn(vmscale(db_s, &state, &args))));
    wait_for("4 samples", || sqlite_samples(&db) >= 4);
    // Counted before the sync, so every sample counted is on the disk: one
    // committed between a sync and the count is in the page cache only, and
    // a file system gone read-only may drop it.
    let before = sqlite_samples(&db);
    disk.sync();
    fault(&disk);
    let out = child.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(db_s), "{err}");
    assert!(err.contains(error), "{err}");
    assert!(err.contains("incomplete"), "{err}");
    assert_eq!(stat_interval(), original, "the knob was restored");
    // Mounted again, the store holds what was on disk before the fault,
    // and the run, its process gone, is incomplete.
    // Unmounted for real first: mounted again over a shut-down instance
    // still busy, the device would give back that instance, EIO and all.
    wait_for("the image unmounted", || disk.umount());
    disk.mount("errors=continue");
    let run = json(
        &vmscale(db_s, &state, &["show", "1", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(run["meta"]["status"], "incomplete", "{}", run["meta"]);
    let n: usize = run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["samples"].as_array().unwrap().len())
        .sum();
    assert!(n as i64 >= before, "{n} samples readable, {before} before");
}

#[test]
fn eio_under_a_run_stops_it_naming_the_store_and_the_error() {
    run_through("errors=continue", Ext4Loop::shut_down, "Input/output error");
}

#[test]
fn erofs_under_a_run_stops_it_naming_the_store_and_the_error() {
    run_through(
        "errors=remount-ro",
        Ext4Loop::fail_read_only,
        "Read-only file system",
    );
}

#[test]
fn postgres_that_takes_no_writes_exits_2_before_measuring() {
    if !postgres_wanted() {
        return;
    }
    let server = Server::start(6);
    let s = Scratch::new("pg-nowrite");
    let run = ["run", "cmd", "--warmup", "0", "--reps", "1", "--", "true"];
    let db = server.database("rodb");
    ok(&vmscale(&db, &s.dir, &run).output().unwrap());
    let mut owner = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    owner
        .batch_execute(
            "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
        )
        .unwrap();
    server
        .admin()
        .batch_execute("CREATE DATABASE emptydb")
        .unwrap();
    let refused = |url: &str, says: &str| {
        let out = vmscale(url, &s.dir, &run).output().unwrap();
        let all = format!("{}{}", common::stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(2), "{url}: {all}");
        assert!(
            all.contains("does not take") && all.contains(says),
            "{url}: {all}"
        );
    };
    // A role that may read the store but not write it: reading works, a
    // run is refused before it measures.
    let reader = server.url("reader", "rodb");
    ok(&vmscale(&reader, &s.dir, &["list"]).output().unwrap());
    refused(&reader, "no INSERT on runs");
    // A role that may not make the tables in an empty database.
    refused(&server.url("reader", "emptydb"), "permission denied");
    // A server that takes no writes at all.
    owner
        .batch_execute("ALTER DATABASE rodb SET default_transaction_read_only = on")
        .unwrap();
    refused(&db, "read-only");
    let n: i64 = owner
        .query_one("SELECT COUNT(*) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1, "a refused run was stored");
}

#[test]
fn a_spool_whose_disk_fails_stops_the_run_with_exit_1() {
    if !postgres_wanted() {
        return;
    }
    let s = Scratch::new("spool-eio");
    let Some(disk) = Ext4Loop::new(&s, "errors=continue") else {
        return;
    };
    let server = Server::start(7);
    let db = server.database("spooleio");
    // The state directory, where the spool goes, on the image.
    let state = disk.mnt.join("state");
    let child = Running(Some(spawn(vmscale(&db, &state, &strs(&slow_run(60))))));
    wait_for("3 samples", || pg_samples(&db).0 >= 3);
    server.ctl("down");
    let spools = state.join("spool");
    wait_for("a spool", || {
        std::fs::read_dir(&spools).is_ok_and(|mut d| d.next().is_some())
    });
    disk.shut_down();
    let out = child.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the spool cannot take") && err.contains("Input/output error"),
        "{err}"
    );
    assert!(err.contains(spools.to_str().unwrap()), "{err}");
    server.ctl("up");
    let listed = runs(&db, &s.dir);
    assert_eq!(listed[0]["status"], "incomplete", "{listed:?}");
    assert!(listed[0]["samples"].as_i64().unwrap() >= 3, "{listed:?}");
}

/// The first schema's tables, as the first vmscale wrote them.
const SCHEMA_1: &str = "
CREATE TABLE runs (id INTEGER PRIMARY KEY, label TEXT, workload TEXT NOT NULL,
    command_line TEXT NOT NULL, version TEXT NOT NULL, config TEXT NOT NULL,
    figures TEXT NOT NULL, machine TEXT NOT NULL, knobs TEXT NOT NULL,
    started_at TEXT NOT NULL, ended_at TEXT, status TEXT NOT NULL, note TEXT,
    origin TEXT NOT NULL);
CREATE INDEX runs_label ON runs(label);
CREATE TABLE cases (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key TEXT NOT NULL, position INTEGER NOT NULL, tasks INTEGER NOT NULL,
    variant TEXT NOT NULL, knobs TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, case_key));
CREATE TABLE samples (id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key TEXT NOT NULL, seq INTEGER NOT NULL, warmup INTEGER NOT NULL,
    taken_at TEXT NOT NULL, figures TEXT NOT NULL, tasks TEXT NOT NULL,
    vmstat TEXT NOT NULL, noise TEXT NOT NULL, flagged INTEGER NOT NULL DEFAULT 0);
CREATE INDEX samples_run ON samples(run_id, case_key);
INSERT INTO runs (workload, command_line, version, config, figures, machine, knobs,
    started_at, status, origin)
VALUES ('pft', 'old', '0.0.1', '{}', '[]', '{}', '{}', '2026-01-01T00:00:00Z',
    'complete', 'measured');
";

#[test]
fn sqlite_schemas_older_migrate_once_with_a_copy_and_newer_are_refused() {
    let s = Scratch::new("schemas");
    let db = s.db();
    let db_s = db.to_str().unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(SCHEMA_1).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
    }
    let children: Vec<Child> = (0..3)
        .map(|_| spawn(vmscale(db_s, &s.dir, &["list", "--json"])))
        .collect();
    for c in children {
        ok(&c.wait_with_output().unwrap());
    }
    let copies: Vec<_> = std::fs::read_dir(&s.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".schema-") || n.contains(".migrating-"))
        .collect();
    assert_eq!(copies, ["test.db.schema-1.bak"], "one copy, no leftovers");
    let bak = rusqlite::Connection::open(s.dir.join("test.db.schema-1.bak")).unwrap();
    let old: i64 = bak
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(old, 1);
    let current: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert!(current > 1);
    assert_eq!(runs(db_s, &s.dir).len(), 1);
    // A newer schema: refused with both versions, the file untouched.
    rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", current + 40)
        .unwrap();
    let before = std::fs::read(&db).unwrap();
    for args in [&["list"][..], &["run", "cmd", "--reps", "1", "--", "true"]] {
        let out = vmscale(db_s, &s.dir, args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("{}", current + 40)), "{err}");
        assert!(err.contains(&format!("this vmscale's {current}")), "{err}");
    }
    // And merging it into another store refuses too.
    let t = Scratch::new("schemas-target");
    let out = vmscale(t.db().to_str().unwrap(), &s.dir, &["merge", db_s])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the newer store was written"
    );
}

#[test]
fn postgres_concurrent_migrations_end_with_one_and_newer_is_refused() {
    if !postgres_wanted() {
        return;
    }
    let admin = std::env::var("VMSCALE_TEST_PG").unwrap();
    let name = format!("vmscale_schemas_{}", std::process::id());
    let mut a = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    a.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    a.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let db = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
    let mut c = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    let pg1 = SCHEMA_1
        .replace("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY")
        .replace("INTEGER", "BIGINT");
    c.batch_execute(&pg1).unwrap();
    c.batch_execute("CREATE TABLE vmscale_schema (version BIGINT NOT NULL); INSERT INTO vmscale_schema VALUES (1)")
        .unwrap();
    let s = Scratch::new("pg-schemas");
    let children: Vec<Child> = (0..4)
        .map(|_| spawn(vmscale(&db, &s.dir, &["list", "--json"])))
        .collect();
    for ch in children {
        ok(&ch.wait_with_output().unwrap());
    }
    let versions: Vec<i64> = c
        .query("SELECT version FROM vmscale_schema", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions.len(), 1, "{versions:?}");
    assert!(versions[0] > 1);
    let uuids: i64 = c
        .query_one("SELECT COUNT(DISTINCT uuid) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(uuids, 1, "the old run got one identity");
    c.batch_execute("UPDATE vmscale_schema SET version = version + 40")
        .unwrap();
    let out = vmscale(&db, &s.dir, &["run", "cmd", "--reps", "1", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("newer"), "{}", stderr(&out));
    let n: i64 = c
        .query_one("SELECT COUNT(*) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1, "the refused run was stored");
    drop(c);
    let _ = a.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
}

/// `n` runs of `reps` quick samples at once into `db`: every one
/// succeeds, without "database is locked", each with all its samples.
fn many_at_once(db: &str, state: &Path, n: usize, reps: usize) {
    let r = reps.to_string();
    let args = ["run", "cmd", "--warmup", "0", "--reps", &r, "--", "true"];
    let children: Vec<Child> = (0..n).map(|_| spawn(vmscale(db, state, &args))).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "a run failed: {err}");
        assert!(!err.contains("locked"), "{err}");
    }
    let listed = runs(db, state);
    assert_eq!(listed.len(), n);
    let ids: std::collections::BTreeSet<i64> =
        listed.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), n);
    for r in &listed {
        assert_eq!(r["status"], "complete", "{r}");
        assert_eq!(r["samples"], reps as i64, "{r}");
    }
}

#[test]
fn sixteen_postgres_runs_and_eight_sqlite_runs_at_once_lose_nothing() {
    let s = Scratch::new("load");
    many_at_once(s.db().to_str().unwrap(), &s.dir, 8, 15);
    if !postgres_wanted() {
        return;
    }
    let admin = std::env::var("VMSCALE_TEST_PG").unwrap();
    let name = format!("vmscale_load_{}", std::process::id());
    let mut a = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    a.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    a.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let db = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
    many_at_once(&db, &s.dir, 16, 15);
    let _ = a.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
}

/// A tiny deterministic generator for kill times.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn counts_by_uuid(db: &Path) -> std::collections::BTreeMap<String, i64> {
    let c = rusqlite::Connection::open(db).unwrap();
    // A merge killed before it made the schema leaves an empty store.
    let Ok(mut st) = c.prepare(
        "SELECT r.uuid, (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id) FROM runs r",
    ) else {
        return Default::default();
    };
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_merge_killed_anywhere_leaves_runs_whole_or_absent_and_finishes_again() {
    let src = Scratch::new("merge-src");
    let src_db = src.db();
    for _ in 0..4 {
        ok(&vmscale(
            src_db.to_str().unwrap(),
            &src.dir,
            &["run", "cmd", "--warmup", "0", "--reps", "60", "--", "true"],
        )
        .output()
        .unwrap());
    }
    let want = counts_by_uuid(&src_db);
    let dst = Scratch::new("merge-dst");
    let dst_db = dst.db();
    let mut rng = Lcg(u64::from(std::process::id()));
    for _ in 0..8 {
        let mut c = spawn(vmscale(
            dst_db.to_str().unwrap(),
            &dst.dir,
            &["merge", src_db.to_str().unwrap()],
        ));
        std::thread::sleep(Duration::from_millis(rng.below(120)));
        let _ = c.kill();
        let _ = c.wait();
        if !dst_db.exists() {
            continue;
        }
        for (uuid, n) in counts_by_uuid(&dst_db) {
            assert_eq!(Some(&n), want.get(&uuid), "run {uuid} merged in part");
        }
    }
    ok(&vmscale(
        dst_db.to_str().unwrap(),
        &dst.dir,
        &["merge", src_db.to_str().unwrap()],
    )
    .output()
    .unwrap());
    assert_eq!(counts_by_uuid(&dst_db), want);
}
