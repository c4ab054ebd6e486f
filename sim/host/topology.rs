//! This machine's shape as Linux describes it in sysfs: which CPUs are
//! SMT siblings, share a last-level cache, a node, a socket. Calibrate
//! measures one pair of CPUs per distance and writes the shape into the
//! profile, so the host profile has this machine's sockets, nodes and
//! caches rather than one flat node.

use crate::machine::TopologySpec;
use std::collections::BTreeSet;
use std::fs;

/// One online CPU and the places it shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCpu {
    pub id: usize,
    pub socket: u32,
    /// The core: its socket and core_id together (core ids repeat across sockets).
    pub core: (u32, u32),
    /// The first CPU of the last-level cache it shares.
    pub llc: usize,
    pub node: u32,
}

/// How two CPUs are related, nearest first: each is priced by its own latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distance {
    Smt,
    Llc,
    Node,
    Remote,
}

impl std::fmt::Display for Distance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Distance::Smt => "SMT siblings",
            Distance::Llc => "sharing a last-level cache",
            Distance::Node => "in one node",
            Distance::Remote => "across nodes",
        })
    }
}

impl HostCpu {
    pub fn distance(&self, other: &HostCpu) -> Distance {
        if self.core == other.core {
            Distance::Smt
        } else if self.llc == other.llc {
            Distance::Llc
        } else if self.node == other.node {
            Distance::Node
        } else {
            Distance::Remote
        }
    }
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// A sysfs CPU list (`0-3,8,10-11`).
pub fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().ok()?..=b.parse::<usize>().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// The online CPUs as sysfs places them; None where sysfs does not say
/// (not Linux, or a container that hides it).
pub fn read_host() -> Option<Vec<HostCpu>> {
    let online = parse_list(&read("/sys/devices/system/cpu/online")?)?;
    let nodes: Vec<(u32, Vec<usize>)> = (0..1024u32)
        .filter_map(|n| {
            let list = read(&format!("/sys/devices/system/node/node{n}/cpulist"))?;
            Some((n, parse_list(&list)?))
        })
        .collect();
    online
        .iter()
        .map(|&id| {
            let topo = |f: &str| read(&format!("/sys/devices/system/cpu/cpu{id}/topology/{f}"));
            let socket = topo("physical_package_id")?.parse().ok()?;
            let core_id = topo("core_id")?.parse().ok()?;
            // The highest cache level it has is its last-level cache.
            let llc = (0..8)
                .rev()
                .find_map(|i| {
                    read(&format!(
                        "/sys/devices/system/cpu/cpu{id}/cache/index{i}/shared_cpu_list"
                    ))
                })
                .and_then(|l| parse_list(&l)?.first().copied())
                .unwrap_or(id);
            let node = nodes
                .iter()
                .find(|(_, cpus)| cpus.contains(&id))
                .map_or(0, |(n, _)| *n);
            Some(HostCpu {
                id,
                socket,
                core: (socket, core_id),
                llc,
                node,
            })
        })
        .collect()
}

/// The profile's topology for these CPUs: sockets, nodes, cores, threads
/// and caches counted, when every socket, node, core and cache is alike;
/// None when they are not (a part with mixed cores, or CPUs offline).
pub fn topology(cpus: &[HostCpu]) -> Option<TopologySpec> {
    let count = |key: &dyn Fn(&HostCpu) -> (u32, u32, usize)| {
        cpus.iter().map(key).collect::<BTreeSet<_>>().len() as u32
    };
    let sockets = count(&|c| (c.socket, 0, 0));
    let nodes = count(&|c| (c.node, 0, 0));
    let cores = count(&|c| (c.core.0, c.core.1, 0));
    let llcs = count(&|c| (0, 0, c.llc));
    let total = cpus.len() as u32;
    let even = |parts: u32| parts > 0 && total.is_multiple_of(parts);
    if ![sockets, nodes, cores, llcs].into_iter().all(even)
        || !nodes.is_multiple_of(sockets)
        || !cores.is_multiple_of(llcs)
        || !cores.is_multiple_of(nodes)
    {
        return None;
    }
    // Every group must be of one size, not only the counts divide.
    let sizes_alike = |key: &dyn Fn(&HostCpu) -> (u32, u32, usize)| {
        let mut sizes = std::collections::BTreeMap::new();
        for c in cpus {
            *sizes.entry(key(c)).or_insert(0u32) += 1;
        }
        sizes.values().collect::<BTreeSet<_>>().len() == 1
    };
    let alike = sizes_alike(&|c| (c.socket, 0, 0))
        && sizes_alike(&|c| (c.node, 0, 0))
        && sizes_alike(&|c| (c.core.0, c.core.1, 0))
        && sizes_alike(&|c| (0, 0, c.llc));
    if !alike {
        return None;
    }
    Some(TopologySpec {
        sockets,
        nodes_per_socket: nodes / sockets,
        cores_per_socket: cores / sockets,
        threads_per_core: total / cores,
        cores_per_llc: cores / llcs,
        sockets_per_board: None,
        numa_fake: 1,
        possible_cpus: None,
        nr_cpus: None,
        page_size: super::sys::page_size(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(id: usize, socket: u32, core: u32, llc: usize, node: u32) -> HostCpu {
        HostCpu {
            id,
            socket,
            core: (socket, core),
            llc,
            node,
        }
    }

    #[test]
    fn lists_read_as_sysfs_writes_them() {
        assert_eq!(parse_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn two_sockets_of_two_cores_of_two_threads() {
        // Linux numbering: one thread of each core first, then the siblings.
        let cpus: Vec<HostCpu> = (0..8)
            .map(|id| {
                let core = id % 4;
                let socket = core as u32 / 2;
                cpu(id, socket, core as u32 % 2, socket as usize * 2, socket)
            })
            .collect();
        let t = topology(&cpus).unwrap();
        assert_eq!(
            (
                t.sockets,
                t.nodes_per_socket,
                t.cores_per_socket,
                t.threads_per_core,
                t.cores_per_llc
            ),
            (2, 1, 2, 2, 2)
        );
        assert_eq!(cpus[0].distance(&cpus[4]), Distance::Smt);
        assert_eq!(cpus[0].distance(&cpus[1]), Distance::Llc);
        assert_eq!(cpus[0].distance(&cpus[2]), Distance::Remote);
        // A missing sibling makes the cores unalike.
        assert_eq!(topology(&cpus[..7]), None);
    }
}
