//! The store on PostgreSQL (`--db postgres://…`): the connection, the few
//! differences from SQLite's dialect (`$N` placeholders, BIGINT and
//! BIGSERIAL keys, RETURNING), and the conversion of values. Many
//! machines write one database at once; migrations take an advisory lock.

use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls};
use std::path::Path;
use std::time::Duration;

use super::backend::{Row, Value};
use super::error::{Error, Result};

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
    match auth {
        Some(a) => {
            let user = a.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

pub fn connect(url: &str) -> Result<Client> {
    let mut config: postgres::Config = url.parse().map_err(|e| Error::Open {
        what: format!("--db {}: not a PostgreSQL URL", shown(url)),
        message: format!("{e}"),
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config
        .application_name("vmscale")
        .connect(NoTls)
        .map_err(|e| Error::Open {
            what: format!("cannot connect to the store {}", shown(url)),
            message: e.to_string(),
        })
}

/// PostgreSQL's message: the server's severity and text, else the
/// client's.
pub fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.severity(), d.message()),
        None => e.to_string(),
    }
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
    }
}
