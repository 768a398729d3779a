//! The store on PostgreSQL (`--db postgres://…`): the connection, the few
//! differences from SQLite's dialect (`$N` placeholders, BIGINT and
//! BIGSERIAL keys, RETURNING), and the conversion of values. Many
//! machines write one database at once; migrations take an advisory lock.

use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls};
use std::path::Path;
use std::time::Duration;

use super::error::{Error, Result, pg_message};
use super::row::{Row, Value};

/// The URL when `--db` names a PostgreSQL database, else None.
pub fn url(db: &Path) -> Option<&str> {
    let s = db.to_str()?;
    (s.starts_with("postgres://") || s.starts_with("postgresql://")).then_some(s)
}

/// The URL without its password, for messages.
pub fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    // A password may also come as a parameter: ?password=...
    let host = match host.split_once('?') {
        Some((h, q)) => {
            let kept: Vec<&str> = q
                .split('&')
                .filter(|p| !p.starts_with("password="))
                .collect();
            match kept.is_empty() {
                true => h.to_string(),
                false => format!("{h}?{}", kept.join("&")),
            }
        }
        None => host.to_string(),
    };
    match auth {
        Some(a) => {
            let user = a.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => format!("{scheme}://{host}"),
    }
}

/// The password vmscale itself connects with, once taken out of the
/// environment (`keep_password_from_children`).
static PASSWORD: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();

/// PGPASSWORD, and the password of a PostgreSQL URL in VMSCALE_DB, taken
/// out of the environment and kept for this process's connections alone,
/// so no command, guest or helper vmscale starts inherits them
/// (VMSCALE_DB keeps its URL without the password). Call at the start of
/// `main`, while the process has one thread.
pub fn keep_password_from_children() {
    use std::os::unix::ffi::OsStrExt;
    let env = crate::exec::sys::take_env("PGPASSWORD", None).filter(|p| !p.is_empty());
    let in_url = std::env::var("VMSCALE_DB").ok().and_then(|db| {
        let u = url(Path::new(&db))?;
        let pw = u.parse::<postgres::Config>().ok()?.get_password()?.to_vec();
        crate::exec::sys::take_env("VMSCALE_DB", Some(std::ffi::OsStr::new(&shown(u))));
        Some(pw)
    });
    let _ = PASSWORD.set(env.map(|p| p.as_bytes().to_vec()).or(in_url));
}

/// The kept password, or PGPASSWORD when none was kept (a library user).
fn password() -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    match PASSWORD.get() {
        Some(kept) => kept.clone(),
        None => std::env::var_os("PGPASSWORD")
            .filter(|p| !p.is_empty())
            .map(|p| p.as_bytes().to_vec()),
    }
}

/// How long opening a store waits for the server: a wrong host or port
/// is an error well before any measurement.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a run whose server went away waits on each try to reach it.
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(2);

fn config(url: &str, timeout: Duration) -> Result<postgres::Config> {
    let mut config: postgres::Config = url.parse().map_err(|e| Error::Open {
        what: format!("--db {}: not a PostgreSQL URL", shown(url)),
        message: format!("{e}"),
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(timeout);
    }
    // libpq's variable, for a password kept off the command line.
    if config.get_password().is_none()
        && let Some(p) = password()
    {
        config.password(p);
    }
    // A server that vanishes without closing the connection (a network
    // gone) is noticed within a minute instead of hanging a statement.
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(15))
        .tcp_user_timeout(Duration::from_secs(60))
        .application_name("vmscale");
    Ok(config)
}

/// Connects to the store's server; a refusal names the server's reason
/// and the fix.
pub fn connect(url: &str) -> Result<Client> {
    let config = config(url, CONNECT_TIMEOUT)?;
    config.connect(NoTls).map_err(|e| Error::Open {
        what: format!("cannot connect to the store {}", shown(url)),
        message: refusal(&config, &e),
    })
}

/// One quick try to reach a server that went away.
pub fn connect_quick(url: &str) -> Result<Client> {
    Ok(config(url, RECONNECT_TIMEOUT)?.connect(NoTls)?)
}

/// The server's (or the network's) reason a connection was refused, and
/// what to do about it.
fn refusal(config: &postgres::Config, e: &postgres::Error) -> String {
    let host = match (config.get_hosts().first(), config.get_ports().first()) {
        (Some(postgres::config::Host::Tcp(h)), p) => format!("{h}:{}", p.unwrap_or(&5432)),
        (Some(postgres::config::Host::Unix(d)), _) => d.display().to_string(),
        (None, _) => "localhost".into(),
    };
    let user = config.get_user().unwrap_or("?");
    let db = config.get_dbname().unwrap_or(user);
    if let Some(d) = e.as_db_error() {
        let reason = format!("{}: {}", d.severity(), d.message());
        let fix = match d.code().code() {
            "28P01" => format!("check the password of user {user} (in the URL, or PGPASSWORD)"),
            "28000" if d.message().contains("no encryption") => format!(
                "the server takes this connection only over TLS, which vmscale does not \
                 speak: allow it without TLS with a `host {db} {user} ADDRESS scram-sha-256` \
                 line in pg_hba.conf, or keep the runs in SQLite and `vmscale merge` them"
            ),
            "28000" => format!("allow user {user} to reach {db} in the server's pg_hba.conf"),
            "3D000" => format!(
                "create it (`createdb -O {user} {db}` on the server), or name an existing \
                 database in the URL"
            ),
            "53300" => "too many connections: raise max_connections or run fewer at once".into(),
            "57P03" => "the server is starting or stopping: try again".into(),
            _ => "check the URL given with --db or VMSCALE_DB".into(),
        };
        return format!("{reason}; {fix}");
    }
    // The client's error names the cause (refused, timed out) in its source.
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    let fix = if text.contains("refused") {
        format!(
            "nothing listens on {host}: check the host and port in the URL and that PostgreSQL runs there"
        )
    } else if text.contains("timed out") || text.contains("timeout") {
        format!(
            "no answer from {host} within {} s: check the host, the port and any firewall",
            CONNECT_TIMEOUT.as_secs()
        )
    } else if text.contains("password missing") {
        "the server asks for a password: give it in the URL (postgres://USER:PASSWORD@...) or in PGPASSWORD".into()
    } else {
        "check the URL given with --db or VMSCALE_DB".into()
    };
    format!("{text}; {fix}")
}

/// True when the server refused a statement because it takes no writes
/// from us: a role without the rights (42501), a read-only server or
/// standby (25006).
fn refuses_writes(e: &postgres::Error) -> bool {
    e.as_db_error()
        .is_some_and(|d| matches!(d.code().code(), "42501" | "25006"))
}

/// `e` as a refusal of writes when it is one (else unchanged), naming
/// the store and the fix.
pub fn write_refusal(url: &str, e: Error) -> Error {
    match e {
        Error::Postgres(p) if refuses_writes(&p) => Error::Refuses(format!(
            "the store {} does not take writes ({}): a run needs a role that may create and \
             write vmscale's tables (GRANT ... ON ALL TABLES IN SCHEMA, or the schema's \
             owner) on a server that takes writes, or name another store with --db",
            shown(url),
            pg_message(&p)
        )),
        Error::Migration { step, source } => match write_refusal(url, *source) {
            e @ Error::Refuses(_) => e,
            e => Error::Migration {
                step,
                source: Box::new(e),
            },
        },
        e => e,
    }
}

/// The tables a run writes, with what it does to them.
const WRITES: [(&str, &str); 6] = [
    ("runs", "INSERT"),
    ("runs", "UPDATE"),
    ("cases", "INSERT"),
    ("samples", "INSERT"),
    ("profile_cases", "INSERT"),
    ("lock_rows", "INSERT"),
];

/// Refuses a store whose server takes no writes or whose role may not
/// write the tables a run writes (checked by the server's own privilege
/// functions, nothing written).
pub fn check_writes(c: &mut Client, url: &str) -> Result<()> {
    let read_only: String = c
        .query_one("SELECT current_setting('transaction_read_only')", &[])?
        .get(0);
    let mut missing = Vec::new();
    if read_only == "on" {
        missing.push("the server takes no writes (read-only)".to_string());
    }
    for (table, right) in WRITES {
        let has: bool = c
            .query_one("SELECT has_table_privilege($1, $2)", &[&table, &right])?
            .get(0);
        if !has {
            missing.push(format!("no {right} on {table}"));
        }
    }
    let seq: bool = c
        .query_one(
            "SELECT has_sequence_privilege(pg_get_serial_sequence('runs', 'id'), 'USAGE')",
            &[],
        )?
        .get(0);
    if !seq {
        missing.push("no USAGE on the sequence of runs.id".into());
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Refuses(format!(
        "the store {} does not take this run's writes ({}): grant them to the role \
         (GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA ...; GRANT USAGE ON ALL SEQUENCES \
         IN SCHEMA ...), or name another store with --db",
        shown(url),
        missing.join("; ")
    )))
}

/// The command line with the password of `--db`'s PostgreSQL URL taken
/// out, and the password, when there was one (main.rs runs vmscale again
/// with it in PGPASSWORD, so process listings never show it). Arguments
/// after `--` (a measured command's) are left alone.
pub fn hide_password(args: &[std::ffi::OsString]) -> Option<(Vec<std::ffi::OsString>, Vec<u8>)> {
    let mut secret = None;
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut rest = false;
    for a in args {
        let s = a.to_str().filter(|_| !rest);
        let (prefix, value) = match s {
            Some("--") => {
                rest = true;
                (None, None)
            }
            Some("--db") => {
                value_next = true;
                out.push(a.clone());
                continue;
            }
            Some(v) if value_next => (Some(""), Some(v)),
            Some(v) => match v.strip_prefix("--db=") {
                Some(u) => (Some("--db="), Some(u)),
                None => (None, None),
            },
            None => (None, None),
        };
        value_next = false;
        let found = value.and_then(|v| url(Path::new(v))).and_then(|u| {
            let pw = u.parse::<postgres::Config>().ok()?.get_password()?.to_vec();
            Some((u, pw))
        });
        match (prefix, found) {
            (Some(p), Some((u, pw))) => {
                secret.get_or_insert(pw);
                out.push(format!("{p}{}", shown(u)).into());
            }
            _ => out.push(a.clone()),
        }
    }
    secret.map(|s| (out, s))
}

/// SQLite's `?N` placeholders as PostgreSQL's `$N` (outside quotes).
pub fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    for c in sql.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        out.push(if c == '?' && !quoted { '$' } else { c });
    }
    out
}

/// A migration written for SQLite, in PostgreSQL's types: 64-bit
/// integers throughout and serial keys.
pub fn ddl(sql: &str) -> String {
    let sql = sql.replace("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY");
    let mut out = String::with_capacity(sql.len());
    let mut word = String::new();
    for c in sql.chars().map(Some).chain([None]) {
        if let Some(c) = c.filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
            word.push(c);
            continue;
        }
        out.push_str(if word == "INTEGER" { "BIGINT" } else { &word });
        word.clear();
        out.extend(c);
    }
    out
}

/// The key of the advisory lock that serialises migrations ("vmsc").
pub const MIGRATION_LOCK: i64 = 0x766d_7363;
/// The key of the advisory lock that serialises merges.
pub const MERGE_LOCK: i64 = 0x766d_7364;

fn params(values: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

pub fn execute(c: &mut Client, sql: &str, values: &[Value]) -> Result<u64> {
    Ok(c.execute(&placeholders(sql), &params(values))?)
}

pub fn insert(c: &mut Client, sql: &str, values: &[Value]) -> Result<i64> {
    let row = c.query_one(
        &format!("{} RETURNING id", placeholders(sql)),
        &params(values),
    )?;
    Ok(row.try_get(0)?)
}

pub fn query(c: &mut Client, sql: &str, values: &[Value]) -> Result<Vec<Row>> {
    let rows = c.query(&placeholders(sql), &params(values))?;
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let names: std::rc::Rc<Vec<String>> = std::rc::Rc::new(
        first
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect(),
    );
    rows.iter()
        .map(|r| {
            let values = (0..names.len())
                .map(|i| r.try_get::<_, Value>(i))
                .collect::<Result<_, _>>()?;
            Ok(Row::new(names.clone(), values))
        })
        .collect()
}

pub fn batch(c: &mut Client, sql: &str) -> Result<()> {
    Ok(c.batch_execute(sql)?)
}

/// Refuses a database that holds tables but not vmscale's schema table:
/// an empty database is adopted, another application's is left alone.
pub fn check_identity(c: &mut Client, url: &str) -> Result<()> {
    let tables: Vec<String> = c
        .query(
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() ORDER BY 1",
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if tables.is_empty() || tables.iter().any(|t| t == SCHEMA_TABLE) {
        return Ok(());
    }
    Err(Error::Unusable(format!(
        "{} is not a vmscale store (it holds tables {} and no {SCHEMA_TABLE}): \
         name an empty database with --db",
        shown(url),
        tables.join(", ")
    )))
}

/// The table holding the schema version (SQLite keeps it in user_version).
pub const SCHEMA_TABLE: &str = "vmscale_schema";

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => v.to_string().to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Value::Real(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => v.to_string().to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Value::Text(s) => s.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Value, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(raw.to_vec()),
            // SUM() of a BIGINT column is NUMERIC in PostgreSQL.
            Type::NUMERIC => numeric(raw)?,
            _ => Value::Text(std::str::from_utf8(raw)?.to_string()),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Value, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A NUMERIC in PostgreSQL's binary form (digit count, weight, sign,
/// display scale, then base-10000 digits): an integer when it has no
/// fraction and fits, else a real.
fn numeric(raw: &[u8]) -> Result<Value, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        let b = raw.get(2 * i..2 * i + 2).ok_or("short NUMERIC")?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    };
    let (ndigits, weight, sign, scale) = (
        usize::from(word(0)?),
        i32::from(word(1)? as i16),
        word(2)?,
        word(3)?,
    );
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let mut exact: Option<i64> = Some(0);
    let mut approx = 0.0f64;
    for i in 0..ndigits {
        let d = i64::from(word(4 + i)?);
        let power = weight - i as i32;
        approx += d as f64 * 10_000f64.powi(power);
        exact = match u32::try_from(power) {
            Ok(p) => exact.and_then(|e| {
                10_000i64
                    .checked_pow(p)
                    .and_then(|m| d.checked_mul(m))
                    .and_then(|t| e.checked_add(t))
            }),
            Err(_) if d == 0 => exact,
            Err(_) => None,
        };
    }
    let negative = sign == 0x4000;
    Ok(match exact.filter(|_| scale == 0) {
        Some(v) => Value::Int(if negative { -v } else { v }),
        None => Value::Real(if negative { -approx } else { approx }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_types_are_translated_outside_quotes() {
        assert_eq!(
            placeholders("SELECT '?1', x FROM t WHERE a = ?1 AND b = ?12"),
            "SELECT '?1', x FROM t WHERE a = $1 AND b = $12"
        );
        assert_eq!(
            ddl("id INTEGER PRIMARY KEY,\n n INTEGER NOT NULL, m INTEGERS, k INTEGER)"),
            "id BIGSERIAL PRIMARY KEY,\n n BIGINT NOT NULL, m INTEGERS, k BIGINT)"
        );
    }

    #[test]
    fn numerics_decode_to_integers_or_reals() {
        // 123456789 = [1, 2345, 6789] with weight 2; -1.5 = [1, 5000] weight 0.
        let big = [0, 3, 0, 2, 0, 0, 0, 0, 0, 1, 0x09, 0x29, 0x1a, 0x85];
        assert_eq!(numeric(&big).unwrap(), Value::Int(123_456_789));
        let half = [0, 2, 0, 0, 0x40, 0, 0, 1, 0, 1, 0x13, 0x88];
        assert_eq!(numeric(&half).unwrap(), Value::Real(-1.5));
        assert_eq!(numeric(&[0, 0, 0, 0, 0, 0, 0, 0]).unwrap(), Value::Int(0));
    }

    #[test]
    fn a_password_is_not_shown() {
        assert_eq!(
            shown("postgres://u:secret@db:5432/x"),
            "postgres://u@db:5432/x"
        );
        assert_eq!(shown("postgres://db/x"), "postgres://db/x");
        assert_eq!(
            shown("postgres://db/x?password=p&sslmode=disable"),
            "postgres://db/x?sslmode=disable"
        );
        let args = |a: &[&str]| -> Vec<std::ffi::OsString> { a.iter().map(Into::into).collect() };
        let (hidden, pw) =
            hide_password(&args(&["v", "--db=postgres://u:s%40t@h/x", "list"])).unwrap();
        assert_eq!(pw, b"s@t");
        assert_eq!(hidden[1], "--db=postgres://u@h/x");
        assert!(hide_password(&hidden).is_none());
        let (hidden, _) = hide_password(&args(&[
            "v",
            "--db",
            "postgres://u:s@h/x",
            "run",
            "cmd",
            "--",
            "psql",
            "postgres://u:s@h/x",
        ]))
        .unwrap();
        assert_eq!(hidden[2], "postgres://u@h/x");
        assert_eq!(
            hidden[7], "postgres://u:s@h/x",
            "the measured command's own argument"
        );
    }
}
