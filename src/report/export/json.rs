//! JSON: the report's structured data, pretty-printed.

use super::{Exporter, Report};
use crate::error::{Error, Result};

pub struct Json;

impl Exporter for Json {
    fn export(&self, report: &Report) -> Result<String> {
        serde_json::to_string_pretty(&report.data)
            .map(|s| s + "\n")
            .map_err(|e| Error::Failed(format!("json: {e}")))
    }
}
