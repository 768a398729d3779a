//! Helpers for end-to-end tests: run the real binary against a private store.
#![allow(dead_code)]

pub mod fixtures;
pub mod guest;
pub mod pg;
pub mod room;
pub mod turn;

#[allow(unused_imports)] // tests/progress_plan.rs, a binary of its own, takes no turn
pub use turn::machine_turn;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary directory removed on drop, holding the test's store.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "vmscale-test-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch { dir }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.join("test.db")
    }

    /// Runs vmscale with this scratch store.
    pub fn vmscale(&self, args: &[&str]) -> Output {
        vmscale_with_db(&self.db(), args)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn vmscale_with_db(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(args)
        .env("VMSCALE_DB", db)
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("run vmscale")
}

/// vmscale with the store `db` and the knob state directory `state`, not
/// yet started.
pub fn vmscale_state(db: &Path, state: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    c.args(args)
        .env("VMSCALE_DB", db)
        .env("VMSCALE_STATE_DIR", state)
        .env_remove("XDG_DATA_HOME");
    c
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "vmscale failed with {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// Parses stdout as JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(o)).expect("stdout is JSON")
}

/// `vmscale show RUN --json` against the store `db`.
pub fn show(db: &Path, run: &str) -> serde_json::Value {
    json(&vmscale_with_db(db, &["show", run, "--json"]))
}

/// Polls `probe` every 50 ms until it gives a value; fails the test
/// saying what it waited for when `limit` passes first.
pub fn wait_until<T>(
    what: &str,
    limit: std::time::Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            start.elapsed() < limit,
            "waited {limit:?} for {what} in vain"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A stored run's case's samples that count (warm-ups left out).
pub fn measured(case: &serde_json::Value) -> Vec<serde_json::Value> {
    case["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["warmup"] == false)
        .cloned()
        .collect()
}

/// A figure of a stored sample (JSON), failing the test when it is missing.
pub fn fig(sample: &serde_json::Value, name: &str) -> f64 {
    sample["data"]["figures"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("figure {name} missing in {sample}"))
}

/// A directory under tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The headless browser the HTML tests render with, when one is installed.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Runs `browser` headless on `url` with a private profile.
pub fn headless(browser: &str, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// A page as headless Chromium rendered it: the DOM and a screenshot.
pub struct Rendered {
    pub dom: String,
}

/// Renders `html` in headless Chromium: dumps the DOM and takes a
/// screenshot, which must be a PNG that is not blank. Without a browser it
/// returns None (printing why), which is allowed only outside CI.
pub fn render_in_browser(dir: &Path, html: &Path) -> Option<Rendered> {
    let Some(browser) = chromium() else {
        skip("rendering needs chromium (apt-get install chromium; .ci/run installs it)");
        return None;
    };
    let url = format!("file://{}", html.display());
    let profile = dir.join("profile");
    let dom = headless(browser, &profile, &["--dump-dom"], &url);
    let png = dir.join("shot.png");
    let shot = headless(
        browser,
        &profile,
        &[&format!("--screenshot={}", png.display())],
        &url,
    );
    assert!(
        png.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // A blank white page compresses to a few KiB; plots and text do not.
    assert!(
        bytes.len() > 30_000,
        "screenshot looks blank ({} bytes)",
        bytes.len()
    );
    Some(Rendered {
        dom: String::from_utf8_lossy(&dom.stdout).into_owned(),
    })
}

/// Whether the tests run as root (effective uid 0).
pub fn is_root() -> bool {
    vmscale::exec::euid() == 0
}

/// Whether the tests run under CI: `CI=true`, as .ci/run sets it. There
/// every component is installed, so a test that misses one fails.
pub fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// A test that cannot run here (no root, no facility) says why and skips;
/// under CI=true it fails instead, since CI must exercise every component.
#[allow(dead_code)] // not every test file skips
pub fn skip(why: &str) {
    assert!(!under_ci(), "under CI=true this test must run, but: {why}");
    eprintln!("skipped: {why}");
}

/// Runs git with ARGS in `dir` under a fixed author; gives its stdout,
/// trimmed, and fails the test when git does.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=vmscale test",
            "-c",
            "user.email=test@vmscale",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    stdout(&o).trim().to_string()
}
