//! The kernel's CPU-list syntax ("0-3,8,10-11"), used by sysfs and by `--pin`.

use crate::error::{Error, Result};

/// The largest CPU id accepted: beyond any kernel's NR_CPUS, and small
/// enough that a typo like `0-99999999999` cannot exhaust memory.
pub const MAX_CPU_ID: usize = 65535;

/// Parses a CPU list such as `0-3,8,10-11`. An empty string is an empty list.
pub fn parse(text: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match part.split_once('-') {
            Some((lo, hi)) => {
                let lo: usize = lo
                    .trim()
                    .parse()
                    .map_err(|_| Error::Input(format!("'{part}' is not a CPU range like 0-3")))?;
                let hi: usize = hi
                    .trim()
                    .parse()
                    .map_err(|_| Error::Input(format!("'{part}' is not a CPU range like 0-3")))?;
                if hi < lo {
                    return Err(Error::Input(format!(
                        "CPU range '{part}' runs backwards: write {hi}-{lo}"
                    )));
                }
                if hi > MAX_CPU_ID {
                    return Err(too_big(hi));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(
                part.parse()
                    .map_err(|_| Error::Input(format!("'{part}' is not a CPU number")))?,
            ),
        }
    }
    if let Some(&big) = cpus.iter().find(|&&c| c > MAX_CPU_ID) {
        return Err(too_big(big));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// A CPU list given as an option (`--cpus 0-3,8`): parsed by [`parse`]
/// once, where clap reads the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

impl std::str::FromStr for CpuList {
    type Err = Error;
    fn from_str(text: &str) -> Result<CpuList> {
        parse(text)
            .map(CpuList)
            .map_err(|e| Error::Input(format!("{e}; use a CPU list like 0-3,8")))
    }
}

fn too_big(cpu: usize) -> Error {
    Error::Input(format!(
        "CPU {cpu} is beyond the largest CPU id vmscale takes ({MAX_CPU_ID})"
    ))
}

/// Formats CPUs back into the compact list syntax.
pub fn format(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(parse("0-3,8,10-11").unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse("").unwrap(), Vec::<usize>::new());
        assert_eq!(parse("5\n").unwrap(), vec![5]);
    }

    #[test]
    fn rejects_garbage() {
        crate::error::assert_input(parse("a-b"));
        crate::error::assert_input(parse("3-1"));
    }

    #[test]
    fn huge_ids_are_refused_not_allocated() {
        assert_eq!(parse("65535").unwrap(), vec![65535]);
        let Err(Error::Input(e)) = parse("0-18446744073709551615") else {
            panic!("a huge CPU id is not bad input")
        };
        assert!(e.contains("largest CPU id"), "{e}");
        crate::error::assert_input(parse("99999999999"));
        crate::error::assert_input(parse("100000-200000"));
    }

    #[test]
    fn an_option_parses_as_the_list_or_names_the_syntax() {
        let list: CpuList = "8,0-2".parse().unwrap();
        assert_eq!(list, CpuList(vec![0, 1, 2, 8]));
        let Err(Error::Input(e)) = "0-x".parse::<CpuList>() else {
            panic!("a bad CPU list is not bad input")
        };
        assert!(e.contains("'0-x'") && e.contains("like 0-3,8"), "{e}");
    }

    #[test]
    fn formats_round_trip() {
        let cpus = vec![0, 1, 2, 3, 8, 10, 11];
        assert_eq!(format(&cpus), "0-3,8,10-11");
        assert_eq!(parse(&format(&cpus)).unwrap(), cpus);
    }
}
