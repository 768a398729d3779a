//! A closed stdout (`vmscale show --csv | head -1`) ends vmscale quietly
//! with exit 0: Rust's print macros panic on EPIPE; that panic is recognised,
//! not reported, and unwound (so knob sessions still restore) to `main`,
//! which exits 0.

use std::any::Any;

/// Whether a panic's payload is a print to a closed pipe.
pub fn is_broken_pipe(payload: &(dyn Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    text.contains("Broken pipe") || text.contains("os error 32")
}

/// Installs a panic hook that stays silent for a broken pipe and reports
/// every other panic as before.
pub fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            default(info);
        }
    }));
}

/// Runs `f`; a broken pipe inside it exits 0, other panics go on unwinding.
pub fn run<T>(f: impl FnOnce() -> T) -> T {
    quiet_on_broken_pipe();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) if is_broken_pipe(p.as_ref()) => std::process::exit(0),
        Err(p) => std::panic::resume_unwind(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_print_failures_only() {
        let p: Box<dyn Any + Send> =
            Box::new("failed printing to stdout: Broken pipe (os error 32)".to_string());
        assert!(is_broken_pipe(p.as_ref()));
        let p: Box<dyn Any + Send> = Box::new("index out of bounds");
        assert!(!is_broken_pipe(p.as_ref()));
    }
}
