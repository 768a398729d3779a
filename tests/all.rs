//! The integration tests, one binary: each tests/NAME.rs is a module here,
//! run alone as `cargo test --test all NAME::`. One binary links the
//! library and its dependencies once, not once per file. Tests of
//! different files now run side by side in one process: those that change
//! the machine's knobs or set-up room take turns (`common::machine_turn`).
//! A new file gets its `mod` line here (tests/layout.rs checks it).

mod common;

mod bisect;
mod broken_pipe;
mod cache;
mod cli_bad_input;
mod cli_formats;
mod cli_help;
mod colour;
mod compare;
mod doctor;
mod fault_variants;
mod fit_export;
mod fleet;
mod fuzz_parsers;
mod guest;
mod history;
mod html_micro;
mod html_report;
mod import;
mod import_mail;
mod kbuild;
mod knob_safety;
mod knobs;
mod layout;
mod machine_fake_tree;
mod machine_live;
mod machine_qemu_tree;
mod meminfo;
mod micro;
mod mthp;
mod nested_kvm;
mod no_secret;
mod numa_fixtures;
mod numa_vm;
mod pft_e2e;
mod procs_e2e;
mod profile_e2e;
mod reproduce;
mod scale;
mod scale_vm;
mod setup_room;
mod show_formats;
mod stats_e2e;
mod store_faults;
mod store_robust;
mod stressng_e2e;
mod sysinfo_cli;
mod thp_e2e;
mod usl_fit;
mod ux;
mod vms_e2e;
mod wis_e2e;
