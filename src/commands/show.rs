//! `vmscale show RUN`: reprints a stored run exactly as `run` printed it.

use super::Result;
use crate::store::Store;
use std::path::Path;

/// `show` in any output format, through the exporters; the text is the
/// same bytes `run` printed.
pub fn show_as(db: &Path, spec: &str, format: crate::report::export::Format) -> Result<()> {
    let store = Store::open_existing(db)?;
    let id = store.resolve(spec)?;
    let run = store.load(id)?;
    let mut report = crate::report::show::report(&run);
    super::probes_out::attach(&store, id, &mut report)?;
    let out = crate::report::export::exporter(format).export(&report)?;
    super::output::emit(format, &out)?;
    if format == crate::report::export::Format::Text {
        super::probes_out::emit(&super::probes_out::text(&store, id)?)?;
    }
    Ok(())
}
