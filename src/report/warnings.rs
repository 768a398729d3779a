//! Warnings under a report's tables: each one `warning: …`, folded at word
//! boundaries to 80 columns with a hanging indent, so a long cause still
//! reads in mail and terminals.

/// The text block of `warnings`, one folded warning after another.
pub fn paragraph<S: AsRef<str>>(warnings: &[S]) -> String {
    warnings
        .iter()
        .map(|w| crate::text::fill(w.as_ref(), 80, "warning: ", "  "))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_warnings_fold_to_80_columns_and_keep_every_word() {
        let long = "2 tasks: /proc/vmstat pgfault rose by 9000: 4096 in the tasks' timed \
                    loops, 904 by vmscale around them (its rusage), 4000 (+97.7 %) by neither; \
                    other processes faulted meanwhile (they used 30 % of the CPUs)";
        let text = super::paragraph(&[long, "short one"]);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.starts_with("warning: 2 tasks:"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 2, "{text}");
        assert!(lines[1].starts_with("  "), "{text}");
        assert_eq!(lines.last(), Some(&"warning: short one"));
        let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        let back: Vec<String> = words(&text)
            .into_iter()
            .filter(|w| w != "warning:")
            .collect();
        assert_eq!(
            back,
            words(long)
                .into_iter()
                .chain(words("short one"))
                .collect::<Vec<_>>()
        );
    }
}
