//! JSON: the report's structured data, pretty-printed.

use super::{Exporter, Report};

pub struct Json;

impl Exporter for Json {
    fn export(&self, report: &Report) -> Result<String, String> {
        serde_json::to_string_pretty(&report.data)
            .map(|s| s + "\n")
            .map_err(|e| format!("json: {e}"))
    }
}
