//! Names for the values a workload's tasks report (`TaskReport::values`):
//! each workload declares its slots as an enum and indexes with it.

/// Declares the enum of a workload's task values: `r.values[V::Pages]`
/// reads or writes the slot. A compile-time check keeps the variants
/// within `exec::VALUES`.
macro_rules! task_values {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $($(#[$vm:meta])* $v:ident,)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vm])* $v,)*
        }

        impl std::ops::Index<$name> for [f64; crate::exec::VALUES] {
            type Output = f64;
            fn index(&self, v: $name) -> &f64 {
                &self[v as usize]
            }
        }

        impl std::ops::IndexMut<$name> for [f64; crate::exec::VALUES] {
            fn index_mut(&mut self, v: $name) -> &mut f64 {
                &mut self[v as usize]
            }
        }

        const _: () = assert!([$(stringify!($v)),*].len() <= crate::exec::VALUES);
    };
}
pub(crate) use task_values;

#[cfg(test)]
mod tests {
    use crate::exec::TaskReport;

    task_values! {
        enum V {
            First,
            Second,
        }
    }

    #[test]
    fn each_variant_names_its_own_slot() {
        let mut r = TaskReport::default();
        r.values[V::Second] = 2.0;
        r.values[V::First] += 1.0;
        assert_eq!(r.values[..3], [1.0, 2.0, 0.0]);
        assert_eq!((r.values[V::First], r.values[V::Second]), (1.0, 2.0));
    }
}
