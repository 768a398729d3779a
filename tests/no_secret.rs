//! No secret handed on: the password of a PostgreSQL store, given in
//! `--db`'s URL, in VMSCALE_DB's or in PGPASSWORD, reaches no process
//! vmscale starts (here `run cmd`'s command, which prints what it got),
//! while vmscale itself still stores the run with it.

use crate::common::pg::PgDb;
use crate::common::{Scratch, stderr};
use std::process::Command;

const SECRET: &str = "sekret-7f3a";

/// The test server's URL with `SECRET` as the password (the server
/// trusts local connections, so any password is taken).
fn with_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, host) = rest.split_once('@').unwrap();
    format!("{scheme}://{user}:{SECRET}@{host}")
}

/// Runs `run cmd` printing the variables a child could find a password
/// in; returns stderr (where the command's output goes).
fn child_sees(s: &Scratch, db_arg: Option<&str>, env: &[(&str, &str)]) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    if let Some(db) = db_arg {
        c.args(["--db", db]);
    }
    c.args([
        "run", "cmd", "--reps", "1", "--warmup", "0", "--", "sh", "-c",
    ])
    .arg("echo \"pw=[$PGPASSWORD] db=[$VMSCALE_DB]\"")
    .env_remove("PGPASSWORD")
    .env_remove("VMSCALE_DB")
    .env("VMSCALE_STATE_DIR", s.dir.join("state"));
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    err
}

#[test]
fn no_child_inherits_the_stores_password() {
    let Some(db) = PgDb::new("secret") else {
        return;
    };
    let s = Scratch::new("no-secret");
    let url = db.db().to_str().unwrap().to_string();
    let secret_url = with_password(&url);
    // In --db's URL (moved to PGPASSWORD by the re-exec that hides it).
    let seen = child_sees(&s, Some(&secret_url), &[]);
    assert!(seen.contains("pw=[] db=[]"), "{seen}");
    // In PGPASSWORD, as libpq users give it.
    let seen = child_sees(&s, Some(&url), &[("PGPASSWORD", SECRET)]);
    assert!(seen.contains("pw=[] db=[]"), "{seen}");
    // In VMSCALE_DB's URL: the child sees the URL without it.
    let seen = child_sees(&s, None, &[("VMSCALE_DB", &secret_url)]);
    assert!(seen.contains(&format!("pw=[] db=[{url}]")), "{seen}");
    assert!(!seen.contains(SECRET), "{seen}");
    // Every one of those runs was stored.
    let mut pg = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let n: i64 = pg
        .query_one("SELECT count(*) FROM runs WHERE status = 'complete'", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 3);
}
