//! What the store's statements take and give, the same for every engine:
//! the values bound to a statement, and result rows whose getters name
//! the column when a value has the wrong type.

use std::rc::Rc;

use super::error::{Error, Result};

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
            Value::Blob(_) => "a blob",
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// One result row; its getters name the column when a value has the
/// wrong type, so a damaged row can be reported rather than guessed at.
#[derive(Debug, Clone)]
pub struct Row {
    names: Rc<Vec<String>>,
    values: Vec<Value>,
}

impl Row {
    pub fn new(names: Rc<Vec<String>>, values: Vec<Value>) -> Row {
        Row { names, values }
    }

    /// The column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.names
    }

    /// The values, in column order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    fn value(&self, i: usize) -> &Value {
        self.values.get(i).unwrap_or(&Value::Null)
    }

    fn wrong(&self, i: usize, want: &str) -> Error {
        let name = self.names.get(i).map_or("?", String::as_str);
        Error::corrupt(format!(
            "column {name} holds {}, not {want}",
            self.value(i).kind()
        ))
    }

    pub fn int(&self, i: usize) -> Result<i64> {
        self.opt_int(i)?.ok_or_else(|| self.wrong(i, "an integer"))
    }

    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v)),
            _ => Err(self.wrong(i, "an integer")),
        }
    }

    pub fn bool(&self, i: usize) -> Result<bool> {
        Ok(self.int(i)? != 0)
    }

    pub fn text(&self, i: usize) -> Result<String> {
        self.opt_text(i)?.ok_or_else(|| self.wrong(i, "text"))
    }

    pub fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Text(v) => Ok(Some(v.clone())),
            _ => Err(self.wrong(i, "text")),
        }
    }
}
