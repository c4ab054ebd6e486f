//! The integration tests, one module per concern, built as one test binary:
//! each binary of its own was linked with the release profile's LTO over
//! every dependency, and those links were most of CI's time.

mod advise;
mod bad_configs;
mod c2c_definitions;
mod calibrate;
mod campaign;
mod charts;
mod cli_hash;
mod cli_output;
mod coherence_checks;
mod common;
mod config;
mod design_from_btf;
mod edited_results;
mod engine_checks;
mod expr_fuzz;
mod filesystem;
mod fuzz_config;
mod fuzz_dirs;
mod fuzz_e2e;
mod fuzz_hash_args;
mod fuzzing;
mod hash_form;
mod hash_vectors;
mod interrupt;
mod layouts;
mod limits;
mod machine_import;
mod native_perf_format;
mod perf_family_format;
mod prechecks;
mod private_hash_growth;
mod report;
mod safety;
mod sensitivity;
mod ticket_knee;
mod tlb_reach;
mod validate;
mod workload_keys;
mod workloads_perf;
mod workloads_program;
mod workloads_programs;
mod workloads_schbench;
mod workloads_toml;
mod workloads_will_it_scale;
