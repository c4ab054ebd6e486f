//! The machine profiles shipped in configs/machines/, compiled in so the
//! binary works from any directory.

use super::MachineSpec;

const PRESETS: &[(&str, &str)] = &[
    (
        "apple-m3max",
        include_str!("../../configs/machines/apple-m3max.toml"),
    ),
    (
        "arm64-8",
        include_str!("../../configs/machines/arm64-8.toml"),
    ),
    (
        "bdx-ex-4s-192",
        include_str!("../../configs/machines/bdx-ex-4s-192.toml"),
    ),
    (
        "bergamo-1s-256",
        include_str!("../../configs/machines/bergamo-1s-256.toml"),
    ),
    ("clx-2s", include_str!("../../configs/machines/clx-2s.toml")),
    (
        "clx-8s-448",
        include_str!("../../configs/machines/clx-8s-448.toml"),
    ),
    (
        "clx-ap-2s-192",
        include_str!("../../configs/machines/clx-ap-2s-192.toml"),
    ),
    (
        "cpl-4s-224",
        include_str!("../../configs/machines/cpl-4s-224.toml"),
    ),
    (
        "e5-2650-2s-32",
        include_str!("../../configs/machines/e5-2650-2s-32.toml"),
    ),
    (
        "genoa-2s-384",
        include_str!("../../configs/machines/genoa-2s-384.toml"),
    ),
    (
        "gnr-2s-384",
        include_str!("../../configs/machines/gnr-2s-384.toml"),
    ),
    (
        "graviton2-64",
        include_str!("../../configs/machines/graviton2-64.toml"),
    ),
    (
        "graviton3-64",
        include_str!("../../configs/machines/graviton3-64.toml"),
    ),
    ("icx-2s", include_str!("../../configs/machines/icx-2s.toml")),
    (
        "milan-2s",
        include_str!("../../configs/machines/milan-2s.toml"),
    ),
    (
        "power9-lpar-160",
        include_str!("../../configs/machines/power9-lpar-160.toml"),
    ),
    (
        "sg2042-64",
        include_str!("../../configs/machines/sg2042-64.toml"),
    ),
    (
        "skl-2s-104",
        include_str!("../../configs/machines/skl-2s-104.toml"),
    ),
    (
        "spr-2s-96",
        include_str!("../../configs/machines/spr-2s-96.toml"),
    ),
    (
        "srf-2s-192",
        include_str!("../../configs/machines/srf-2s-192.toml"),
    ),
    (
        "uv-4096",
        include_str!("../../configs/machines/uv-4096.toml"),
    ),
    ("uv-512", include_str!("../../configs/machines/uv-512.toml")),
    (
        "vsmp-32",
        include_str!("../../configs/machines/vsmp-32.toml"),
    ),
    (
        "x86-vm-48c96t",
        include_str!("../../configs/machines/x86-vm-48c96t.toml"),
    ),
];

pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|(name, _)| *name)
}

/// The profile of a shipped machine; None for an unknown name.
pub fn preset(name: &str) -> Option<MachineSpec> {
    let (_, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
    // The shipped files are checked by a test, so a parse failure is a build defect.
    Some(toml::from_str(text).unwrap_or_else(|e| panic!("configs/machines/{name}.toml: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;

    #[test]
    fn every_preset_parses_resolves_and_is_named_after_its_file() {
        for name in names() {
            let spec = preset(name).unwrap();
            assert_eq!(spec.name, name);
            let m = Machine::new(spec).unwrap();
            assert!(m.cpus() >= 8, "{name}");
        }
        assert_eq!(
            Machine::new(preset("cpl-4s-224").unwrap()).unwrap().cpus(),
            224
        );
        assert_eq!(
            Machine::new(preset("uv-4096").unwrap()).unwrap().cpus(),
            4096
        );
        assert_eq!(Machine::new(preset("vsmp-32").unwrap()).unwrap().cpus(), 32);
    }

    /// Every x86 profile, Intel and AMD, states its part's facts and a kernel, so its
    /// syscall pays what that kernel selects on that part; two cannot:
    /// the guest, whose host part is not stated, and Sierra Forest, whose
    /// BHI enumeration was not found.
    #[test]
    fn every_x86_profile_but_the_guest_and_sierra_forest_states_its_cpu_facts_and_kernel() {
        let x86 = [
            "bdx-ex-4s-192",
            "bergamo-1s-256",
            "clx-2s",
            "clx-8s-448",
            "clx-ap-2s-192",
            "cpl-4s-224",
            "e5-2650-2s-32",
            "genoa-2s-384",
            "gnr-2s-384",
            "icx-2s",
            "milan-2s",
            "skl-2s-104",
            "spr-2s-96",
            "uv-4096",
            "uv-512",
            "vsmp-32",
        ];
        for name in x86 {
            let kernel = preset(name).unwrap().kernel;
            assert!(kernel.cpu.is_some() && kernel.version.is_some(), "{name}");
        }
        for name in ["x86-vm-48c96t", "srf-2s-192"] {
            assert!(preset(name).unwrap().kernel.cpu.is_none(), "{name}");
        }
    }

    /// A page size the kernel maps a futex table with must fit in some
    /// level of the part's TLBs: one that neither level holds would make
    /// every access to the table walk, which no shipped part does. Nehalem,
    /// with no 1 GiB entries, maps its direct map with 2 MiB pages; the
    /// C920's first level holds no 2 MiB entry, but its jTLB does.
    #[test]
    fn every_profiles_tlbs_hold_each_page_size_its_kernel_maps_the_tables_with() {
        use crate::machine::tlb::{KernelMapping, Translation};
        let mappings = [
            KernelMapping::Image,
            KernelMapping::DirectMap,
            KernelMapping::Vmalloc,
            KernelMapping::VmallocHuge,
        ];
        for name in names() {
            let spec = preset(name).unwrap();
            let Some(tlb) = &spec.tlb else { continue };
            let t = Translation::resolve(tlb, &spec.background, spec.topology.page_size).unwrap();
            for mapping in mappings {
                let page = t.page_of(mapping).index();
                assert!(
                    t.l1[page].ways > 0 || t.stlb[page].ways > 0,
                    "{name}: no TLB level holds the {mapping:?} pages"
                );
            }
        }
    }

    #[test]
    fn the_single_socket_128_core_part_is_one_node_of_sixteen_core_complexes() {
        let m = Machine::new(preset("bergamo-1s-256").unwrap()).unwrap();
        assert_eq!(m.cpus(), 256);
        assert_eq!(m.nodes(), 1);
        let complexes: std::collections::BTreeSet<u32> =
            (0..m.cpus()).map(|c| m.llc_of(c)).collect();
        assert_eq!(complexes.len(), 16);
        // Crossing the I/O die between complexes costs more than staying in one.
        let other_complex = (1..m.cpus()).find(|&c| m.llc_of(c) != m.llc_of(0)).unwrap();
        let same_complex = (1..m.cpus())
            .find(|&c| m.llc_of(c) == m.llc_of(0) && m.sibling_of(0) != Some(c))
            .unwrap();
        assert!(m.transfer_ps(0, other_complex) > m.transfer_ps(0, same_complex));
    }

    #[test]
    fn each_socket_of_the_8_socket_machine_has_three_one_hop_neighbours_and_four_dearer_two_hop_ones(
    ) {
        let m = Machine::new(preset("clx-8s-448").unwrap()).unwrap();
        assert_eq!(m.cpus(), 448);
        assert_eq!(m.nodes(), 8);
        let first_cpu_of = |node: u32| (0..m.cpus()).find(|&c| m.node_of(c) == node).unwrap();
        for from in 0..8 {
            let others: Vec<u32> = (0..8).filter(|&to| to != from).collect();
            let nearest = others
                .iter()
                .map(|&to| m.remote_latency_ps(from, to))
                .min()
                .unwrap();
            let (near, far): (Vec<u32>, Vec<u32>) = others
                .iter()
                .partition(|&&to| m.remote_latency_ps(from, to) == nearest);
            assert_eq!((near.len(), far.len()), (3, 4), "socket {from}");
            let cpu = first_cpu_of(from);
            let near_memory = m.dram_ps(cpu, near[0]);
            for &to in &others {
                assert_eq!(m.remote_latency_ps(from, to), m.remote_latency_ps(to, from));
                assert_eq!(
                    m.dram_ps(cpu, to) > near_memory,
                    far.contains(&to),
                    "socket {from}: memory on {to} must be dearer exactly when it is two hops away"
                );
            }
            for &to in &far {
                assert!(m.remote_latency_ps(from, to) > nearest);
            }
        }
    }
}
