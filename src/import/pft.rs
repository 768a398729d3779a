//! pft tables as mailed to linux-kernel: a header `Gb Rep Thr CLine User
//! System Wall flt/cpu/s fault/wsec` (Lameter, 2005) or the same without
//! Rep (pft 0.12), then rows. Text is read as a stream of words, so a table
//! whose line breaks were lost (one long line) reads the same.

use super::Table;
use crate::model::{Case, SampleData};

const TAIL: [&str; 6] = ["CLine", "User", "System", "Wall", "flt/cpu/s", "fault/wsec"];

/// Words of prose kept before a header as the table's caption.
const CAPTION_WORDS: usize = 14;

/// A number, with the `s` suffix pft prints after times allowed.
fn number(word: &str, seconds: bool) -> Option<f64> {
    let w = if seconds {
        word.strip_suffix('s').unwrap_or(word)
    } else {
        word
    };
    w.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// Does a header start at `words[i]`? Returns (has Rep, header length).
fn header_at(words: &[&str], i: usize) -> Option<(bool, usize)> {
    if words.get(i) != Some(&"Gb") {
        return None;
    }
    let rep = words.get(i + 1) == Some(&"Rep");
    let at = i + 1 + rep as usize;
    if words.get(at) != Some(&"Thr") {
        return None;
    }
    (words.get(at + 1..at + 1 + TAIL.len())? == TAIL).then_some((rep, at + 1 + TAIL.len() - i))
}

/// One row at `words[i..]`, or None when the table has ended.
fn row(words: &[&str], i: usize, rep: bool) -> Option<(Case, SampleData, usize)> {
    let width = if rep { 9 } else { 8 };
    let w = words.get(i..i + width)?;
    let mut k = 0;
    let mut next = |seconds: bool| {
        let v = number(w[k], seconds);
        k += 1;
        v
    };
    let gb = next(false)?;
    let reps = if rep { next(false)? } else { 1.0 };
    let thr = next(false)?;
    let cline = next(false)?;
    let (user, system, wall) = (next(true)?, next(true)?, next(true)?);
    let (per_cpu, per_wall) = (next(false)?, next(false)?);
    if thr < 1.0 || thr.fract() != 0.0 || reps.fract() != 0.0 {
        return None;
    }
    let mut d = SampleData::default();
    for (name, v) in [
        ("fault/wsec", per_wall),
        ("flt/cpu/s", per_cpu),
        ("wall", wall),
        ("user", user),
        ("system", system),
        ("bytes", gb * (1u64 << 30) as f64),
        ("gb", gb),
        ("rep", reps),
        ("cline", cline),
    ] {
        d.figures.insert(name.into(), v);
    }
    Some((Case::new(thr as usize, "fault"), d, width))
}

pub fn parse(text: &str) -> Vec<Table> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut tables = Vec::new();
    let mut i = 0;
    let mut prose_start = 0;
    while i < words.len() {
        let Some((rep, len)) = header_at(&words, i) else {
            i += 1;
            continue;
        };
        let caption = words[prose_start.max(i.saturating_sub(CAPTION_WORDS))..i].join(" ");
        let mut rows = Vec::new();
        let mut j = i + len;
        while let Some((case, data, width)) = row(&words, j, rep) {
            rows.push((case, data));
            j += width;
        }
        if !rows.is_empty() {
            let format = if rep { "pft-lameter" } else { "pft-0.12" };
            tables.push(Table {
                workload: "pft",
                format,
                // pft's own figures, so imported runs compare with measured ones.
                figures: crate::workload::pft::figures(),
                config: serde_json::json!({
                    "imported": format,
                    "block": tables.len() + 1,
                    "caption": caption,
                    "header": words[i..i + len].join(" "),
                    "mode": "?",
                    "thp": "?",
                    "pin": "?",
                }),
                rows,
            });
        }
        i = j.max(i + 1);
        prose_start = i;
    }
    tables
}
