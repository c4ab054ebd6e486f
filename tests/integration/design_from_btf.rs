//! `futexsim design from-btf`: the running kernel's BTF read into a
//! `[[table]]` that a config loads beside a baseline, and a file that holds
//! no bucket refused with exit 2, naming the file and what it expected.

use futexsim::config::Config;
use futexsim::kernel::table::FieldName;
use std::fs;
use std::path::Path;

use crate::common::{futexsim, Scratch};

const RUNNING_KERNEL_BTF: &str = "/sys/kernel/btf/vmlinux";

/// A raw BTF of one type, `int`: a kernel's format, without its futex hash.
const BTF_OF_AN_INT: [u8; 45] = [
    0x9f, 0xeb, 1, 0, // magic, version, flags
    24, 0, 0, 0, // header length
    0, 0, 0, 0, 16, 0, 0, 0, // types: offset, length
    16, 0, 0, 0, 5, 0, 0, 0, // strings: offset, length
    1, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 32, 0, 0, 0, // INT "int", 4 bytes, 32 bits
    0, b'i', b'n', b't', 0,
];

#[test]
fn the_running_kernels_design_loads_in_a_config_beside_a_baseline() {
    if !Path::new(RUNNING_KERNEL_BTF).exists() {
        eprintln!("{RUNNING_KERNEL_BTF} is absent here: there is no running kernel's BTF to read");
        return;
    }
    let scratch = Scratch::new("design-from-btf");
    let out = scratch.0.join("kernel.toml");
    let run = futexsim(&[
        "design",
        "from-btf",
        "--name",
        "this-kernel",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let design = fs::read_to_string(&out).unwrap();
    assert!(design.contains("# struct futex_hash_bucket: "), "{design}");
    let config = format!(
        "[run]\nduration_us = 20\nwarmup_us = 5\n\n[machine]\npreset = \"milan-2s\"\n\n\
         [workload]\nname = \"perf-hash\"\nthreads = 4\nfutexes = 16\n\n\
         [[table]]\npreset = \"v6.17\"\nbaseline = true\n\n{design}"
    );
    let loaded = Config::parse("study.toml", "study", &config, &[]).unwrap();
    assert_eq!(loaded.designs, ["v6.17", "this-kernel"]);
    let kernel = &loaded.points[0].designs[1];
    assert!(kernel.bucket.field(FieldName::Lock).is_some());
    assert_eq!(loaded.baseline, "v6.17");
    let run = loaded.runs().into_iter().find(|r| r.design == 1).unwrap();
    let (record, _) = run.scenario.simulate().unwrap();
    assert!(record.mean_thread_ops_per_sec > 0.0);

    // Printed without --out, it is the same design, less the signature.
    let printed = futexsim(&["design", "from-btf", "--name", "this-kernel"]);
    assert!(printed.status.success());
    assert!(design.starts_with(std::str::from_utf8(&printed.stdout).unwrap()));
}

#[test]
fn a_btf_without_the_bucket_is_refused_with_exit_2() {
    let scratch = Scratch::new("design-from-btf-int");
    let btf = scratch.0.join("int.btf");
    fs::write(&btf, BTF_OF_AN_INT).unwrap();
    let out = scratch.0.join("design.toml");
    let run = futexsim(&[
        "design",
        "from-btf",
        btf.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: holds no struct futex_hash_bucket among its 1 types",
            btf.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written for a refused BTF");
}

#[test]
fn a_file_that_is_not_btf_is_refused_with_exit_2() {
    let (_scratch, config) = Scratch::holding("design-from-btf-toml", "study.toml", "[run]\n");
    let run = futexsim(&["design", "from-btf", config.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("is neither raw BTF"), "{stderr}");
}
