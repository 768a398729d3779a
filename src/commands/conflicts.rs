//! Option and knob combinations that would silently do nothing: refused
//! with the reason and the fix, never overridden behind the user's back.

use super::{Error, Result};

/// Knobs that only matter for mappings that may get transparent huge pages.
const THP_KNOBS: [&str; 6] = [
    "thp",
    "thp_defrag",
    "khugepaged_defrag",
    "khugepaged_pages_to_scan",
    "khugepaged_scan_sleep",
    "khugepaged_max_ptes_none",
];

/// A workload that advises its mapping `MADV_NOHUGEPAGE` (`--thp never`,
/// pft's and colour's default) never gets huge pages, whatever the THP
/// knobs say: varying them would measure the same thing twice.
pub fn check(workload: &str, config: &serde_json::Value, knobs: &crate::knobs::Plan) -> Result<()> {
    if config.get("thp").and_then(|t| t.as_str()) != Some("never") {
        return Ok(());
    }
    let Some((knob, _)) = knobs.knobs.iter().find(|(k, _)| {
        THP_KNOBS.contains(&k.name)
            || (crate::knobs::registry::per_size_thp(k) && !k.name.starts_with("thp_shmem_"))
    }) else {
        return Ok(());
    };
    Err(Error::Input(format!(
        "--knob {} cannot change {workload}: its mapping is advised MADV_NOHUGEPAGE \
         (--thp never, the default), so it never gets huge pages whatever the knob says; \
         add --thp always (MADV_HUGEPAGE: the knob then decides) or drop the knob",
        knob.name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(spec: &str) -> crate::knobs::Plan {
        crate::knobs::Plan::parse(&[spec.to_string()]).unwrap()
    }

    #[test]
    fn thp_knobs_with_thp_never_are_refused_and_others_pass() {
        let never = json!({"thp": "never"});
        for spec in [
            "thp=never,always",
            "thp_defrag=madvise,never",
            "khugepaged_defrag=0,1",
            "thp_64K=never,always",
        ] {
            let e = check("pft", &never, &plan(spec)).unwrap_err();
            assert!(
                matches!(e, Error::Input(ref m) if m.contains("--thp always")),
                "{spec}"
            );
        }
        assert!(check("pft", &never, &plan("swappiness=10,60")).is_ok());
        assert!(check("pft", &never, &plan("thp_shmem_64K=never,always")).is_ok());
        assert!(check("pft", &json!({"thp": "always"}), &plan("thp=never,always")).is_ok());
        assert!(check("fork", &json!({}), &plan("thp=never,always")).is_ok());
    }
}
