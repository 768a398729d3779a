//! A fresh database on the test PostgreSQL server (`VMSCALE_TEST_PG`, which
//! .ci/run sets), dropped at the end. Under CI=true a missing server fails
//! the test instead of skipping it.

use std::path::Path;

pub struct PgDb {
    admin: String,
    name: String,
    url: String,
}

impl PgDb {
    /// A database named after `tag` and this process, or None (printing
    /// why) when no test server is set outside CI.
    pub fn new(tag: &str) -> Option<PgDb> {
        let Some(admin) = std::env::var("VMSCALE_TEST_PG")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            assert!(
                !super::under_ci(),
                "VMSCALE_TEST_PG is not set under CI: .ci/run starts PostgreSQL and sets it"
            );
            eprintln!("skipped: set VMSCALE_TEST_PG (eval \"$(bench/pg-scratch.sh)\")");
            return None;
        };
        let name = format!("vmscale_{tag}_{}", std::process::id());
        let mut c = postgres::Client::connect(&admin, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL {admin}: {e}"));
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        let url = format!("{base}/{name}");
        Some(PgDb { admin, name, url })
    }

    /// The database's URL, as `--db` and VMSCALE_DB take it.
    pub fn db(&self) -> &Path {
        Path::new(&self.url)
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}
