//! A reader that goes away (`vmscale show --csv | head -1`) ends vmscale
//! quietly with exit 0, for every printing command.

use crate::common;

use crate::common::Scratch;
use std::process::{Command, Stdio};

#[test]
fn closed_stdout_ends_quietly_with_exit_0() {
    let s = Scratch::new("pipe");
    let table = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mail/lameter-2005-one-line.txt"
    );
    common::ok(&s.vmscale(&["import", table]));
    for args in [
        &["show", "--csv", "1"][..],
        &["show", "1"],
        &["list", "--json"],
        &["compare", "1", "2"],
        &["sysinfo"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vmscale"))
            .args(args)
            .env("VMSCALE_DB", s.db())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before vmscale prints anything.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
