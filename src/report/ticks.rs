//! Tick labels for every plot, HTML and terminal: one scale for the axis
//! (k, M or G after its largest tick) and as many decimals as the step
//! between ticks needs, so neighbouring ticks never read the same
//! ("0.105, 0.110", not "0.11, 0.11").

/// How one axis writes its ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks {
    /// The value one unit of the suffix stands for (1, 1e3, 1e6, 1e9).
    scale: f64,
    suffix: &'static str,
    decimals: usize,
}

impl Ticks {
    /// The labels of ticks `step` apart on an axis whose largest tick (in
    /// magnitude) is `largest`.
    pub fn new(step: f64, largest: f64) -> Ticks {
        let largest = largest.abs();
        let (scale, suffix) = if largest >= 1e9 {
            (1e9, "G")
        } else if largest >= 1e6 {
            (1e6, "M")
        } else if largest >= 1e4 {
            (1e3, "k")
        } else {
            (1.0, "")
        };
        let step = (step / scale).abs();
        let mut decimals = 0;
        if step.is_finite() && step > 0.0 {
            // Enough decimals to show the step's first digit, and one more
            // for a step like 0.25 whose second digit tells ticks apart.
            decimals = (-step.log10() - 1e-9).ceil().max(0.0) as usize;
            let digits = step * 10f64.powi(decimals as i32);
            if (digits - digits.round()).abs() > 0.01 * digits {
                decimals += 1;
            }
        }
        Ticks {
            scale,
            suffix,
            decimals: decimals.min(9),
        }
    }

    /// The ticks of `values` (in any order): their smallest gap is the step.
    pub fn of(values: &[f64]) -> Ticks {
        let mut v: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let step = v
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min);
        let largest = v.iter().map(|x| x.abs()).fold(0.0, f64::max);
        Ticks::new(if step.is_finite() { step } else { largest }, largest)
    }

    /// The label of the tick at `v`.
    pub fn label(&self, v: f64) -> String {
        let x = v / self.scale;
        // No "-0" for a tick at zero that arithmetic left a hair below it.
        let x = if x == 0.0 { 0.0 } else { x };
        format!("{x:.*}{}", self.decimals, self.suffix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(values: &[f64]) -> Vec<String> {
        let t = Ticks::of(values);
        values.iter().map(|&v| t.label(v)).collect()
    }

    #[test]
    fn the_history_plots_ticks_read_apart() {
        // `report --html --history` of 12 runs from 0.107 to 0.143 s once
        // read "0.15, 0.15, 0.14, 0.14, ...": ticks 0.005 apart.
        let ticks: Vec<f64> = (0..=10).map(|i| 0.100 + 0.005 * i as f64).collect();
        let l = labels(&ticks);
        assert_eq!(l[0], "0.100");
        assert_eq!(l[1], "0.105");
        assert_eq!(l[10], "0.150");
        let mut distinct = l.clone();
        distinct.dedup();
        assert_eq!(distinct, l, "{l:?}");
    }

    #[test]
    fn precision_follows_the_step() {
        assert_eq!(labels(&[0.0, 0.5, 1.0, 1.5]), ["0.0", "0.5", "1.0", "1.5"]);
        assert_eq!(labels(&[0.0, 0.25, 0.5]), ["0.00", "0.25", "0.50"]);
        assert_eq!(labels(&[0.0, 20.0, 40.0]), ["0", "20", "40"]);
        assert_eq!(labels(&[0.0, 2000.0, 4000.0]), ["0", "2000", "4000"]);
    }

    #[test]
    fn big_axes_take_one_suffix() {
        assert_eq!(
            labels(&[0.0, 5e5, 1e6, 1.5e6]),
            ["0.0M", "0.5M", "1.0M", "1.5M"]
        );
        assert_eq!(
            labels(&[11000.0, 11500.0, 12000.0]),
            ["11.0k", "11.5k", "12.0k"]
        );
        assert_eq!(labels(&[0.0, 2e9, 4e9]), ["0G", "2G", "4G"]);
    }

    #[test]
    fn odd_input_gives_a_label() {
        assert_eq!(Ticks::of(&[]).label(3.0), "3");
        assert_eq!(Ticks::of(&[7.0]).label(7.0), "7");
        assert_eq!(Ticks::new(0.1, 1.0).label(-0.0), "0.0");
        assert_eq!(Ticks::new(f64::NAN, 1.0).label(2.0), "2");
    }
}
