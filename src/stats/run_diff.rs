//! "These runs also differ in": every difference between the runs of a
//! comparison in machine snapshot, workload configuration, vmscale
//! version, run knobs and the knob values of their cases.

use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

use super::side::Side;

/// One way the runs differ: what differs, and its value in each run.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub what: String,
    pub values: Vec<String>,
}

/// Snapshot fields that change from one moment to the next and say
/// nothing about the machine's setup.
fn volatile(key: &str) -> bool {
    key.ends_with("mem_available_kib") || key.ends_with("mem_free_kib")
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "unknown".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            a.iter().map(scalar).collect::<Vec<_>>().join(",")
        }
        Value::Array(a) => format!("{} entries", a.len()),
        Value::Object(o) => format!("{} fields", o.len()),
        other => other.to_string(),
    }
}

/// Strips volatile fields at any depth (so node lists compare on layout).
fn stable(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !volatile(k))
                .map(|(k, v)| (k.clone(), stable(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(stable).collect()),
        other => other.clone(),
    }
}

/// Flattens objects to dotted paths; arrays stay whole values.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn describe(path: &str, values: &[Option<&Value>]) -> String {
    // Arrays of objects (cpus, nodes, caches) differ in layout: say how.
    let counts: Vec<Option<usize>> = values
        .iter()
        .map(|v| v.and_then(|v| v.as_array()).map(|a| a.len()))
        .collect();
    if counts.iter().all(|c| c.is_some()) && counts.windows(2).all(|w| w[0] == w[1]) {
        return format!("{path} (same count, different contents)");
    }
    path.to_string()
}

/// "run 3 tcg, run 5 kvm" when runs were measured under more than one
/// accelerator (a run outside any guest counts as "host").
pub fn mixed_accelerators<'a>(
    metas: impl Iterator<Item = &'a crate::model::RunMeta>,
) -> Option<String> {
    let found: Vec<(i64, String)> = metas
        .map(|m| {
            let accel = m.machine["guest"]["accel"].as_str().unwrap_or("host");
            (m.id, accel.to_string())
        })
        .collect();
    let kinds: BTreeSet<&str> = found.iter().map(|(_, a)| a.as_str()).collect();
    if kinds.len() < 2 {
        return None;
    }
    let named: Vec<String> = found
        .iter()
        .map(|(id, a)| format!("run {id} {a}"))
        .collect();
    Some(named.join(", "))
}

pub fn differences(sides: &[Side]) -> Vec<Difference> {
    let mut flat: Vec<BTreeMap<String, Value>> = Vec::new();
    for s in sides {
        let mut m = BTreeMap::new();
        flatten("", &stable(&s.meta.machine), &mut m);
        flatten("config", &s.meta.config, &mut m);
        flatten("knobs", &s.meta.knobs, &mut m);
        m.insert("workload".into(), Value::String(s.meta.workload.clone()));
        m.insert(
            "vmscale version".into(),
            Value::String(s.meta.version.clone()),
        );
        // The knob values a side's cases ran under.
        let mut case_knobs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (_, c) in &s.cases {
            for (k, v) in &c.case().knobs {
                case_knobs.entry(k.clone()).or_default().insert(v.clone());
            }
        }
        for (k, vs) in case_knobs {
            m.insert(
                format!("knob {k}"),
                Value::String(vs.into_iter().collect::<Vec<_>>().join("/")),
            );
        }
        flat.push(m);
    }
    let keys: BTreeSet<&String> = flat.iter().flat_map(|m| m.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        let vals: Vec<Option<&Value>> = flat.iter().map(|m| m.get(k)).collect();
        if vals.windows(2).all(|w| w[0] == w[1]) {
            continue;
        }
        let shown: Vec<String> = vals
            .iter()
            .map(|v| v.map(scalar).unwrap_or_else(|| "absent".into()))
            .collect();
        let what = if vals.iter().any(|v| {
            v.is_some_and(|v| {
                v.as_array()
                    .is_some_and(|a| a.iter().any(|x| x.is_object()))
            })
        }) {
            describe(k, &vals)
        } else {
            k.clone()
        };
        out.push(Difference {
            what,
            values: shown,
        });
    }
    out
}
