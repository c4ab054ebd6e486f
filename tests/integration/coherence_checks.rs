//! Micro-checks of every shipped machine profile against published figures:
//! idle latency per distance, the loaded fan-out of k readers after one
//! write, and contended RMW throughput on one socket and across two. Each
//! figure names its source; a figure not measured on the profile's part says
//! which part it comes from. The model passes within 1.5x of each. These
//! drive the directory alone, so they test the hierarchy, not the kernel.
//! Contended requests wait at their line for a grant, as in the engine, so
//! the checks also hold the arbiter's local batch to its bound.

use futexsim::coherence::probe::{
    contended_rmw, contended_rmw_ns, directory, fan_out_ns, IDLE_GAP, LINE_ADDR,
};
use futexsim::coherence::AccessKind;
use futexsim::machine::presets::{names, preset};
use futexsim::machine::{Level, Machine};
use futexsim::symbol::Symbol;

/// The function the probes' accesses are counted under.
const BY: Symbol = Symbol::Workload;
const TOLERANCE: f64 = 1.5;

/// Where the requesting CPU sits relative to the line's holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Distance {
    /// Modified in another core sharing the requester's LLC.
    LocalHitm,
    /// Clean in another core sharing the requester's LLC.
    LocalClean,
    /// Modified in a core of the requester's node, in another LLC domain.
    NodeHitm,
    /// Modified in a core on another node: the first node of another socket.
    RemoteHitm,
    /// Modified in a core of the farthest node.
    FarHitm,
    DramLocal,
    DramRemote,
}

struct Figure {
    distance: Distance,
    ns: f64,
    source: &'static str,
}

const CLX_MLC: &str =
    "Intel MLC v3.10, Cascade Lake 2S (gjbex/Code-optimization info/cascadelake_mlc.txt)";
const ICX_MLC: &str = "Intel MLC v3.10, Ice Lake 2S (gjbex/Code-optimization info/icelake_mlc.txt)";
const C2C: &str = "nviennot/core-to-core-latency README";
const SPR_MLC: &str =
    "Intel MLC v3.11a, Sapphire Rapids 2S SNC4 (gjbex/Code-optimization info/sapphirerapids_mlc.txt)";
const WILLHALM_E7: &str =
    "Intel MLC on a 4-socket Xeon E7-4800 (T. Willhalm, software.intel.com, 2014-01-28)";
const ANANDTECH_ZEN4: &str = "AnandTech, Ryzen 9 7950X review, core-to-core latency";
const ANANDTECH_GRAVITON2: &str = "AnandTech, 'Cloud Clash', Graviton2 memory latency";

fn f(distance: Distance, ns: f64, source: &'static str) -> Figure {
    Figure {
        distance,
        ns,
        source,
    }
}

/// The published idle figures each profile is held to.
fn idle_figures(profile: &str) -> Vec<Figure> {
    use Distance::*;
    match profile {
        "clx-2s" => vec![
            f(LocalHitm, 49.3, CLX_MLC),
            f(LocalClean, 48.8, CLX_MLC),
            f(RemoteHitm, 113.5, CLX_MLC),
            f(DramLocal, 80.8, CLX_MLC),
            f(DramRemote, 140.4, CLX_MLC),
        ],
        "icx-2s" => vec![
            f(LocalHitm, 64.2, ICX_MLC),
            f(LocalClean, 60.1, ICX_MLC),
            f(RemoteHitm, 127.0, ICX_MLC),
            f(DramLocal, 89.2, ICX_MLC),
            f(DramRemote, 142.7, ICX_MLC),
        ],
        // Cooper Lake: Cascade Lake's figures (the same core and mesh).
        "cpl-4s-224" => vec![
            f(LocalHitm, 49.3, CLX_MLC),
            f(LocalClean, 48.8, CLX_MLC),
            f(RemoteHitm, 113.5, CLX_MLC),
            f(DramRemote, 140.4, CLX_MLC),
        ],
        // The Platinum 8275CL, a Cascade Lake-SP, for the 9242's dies.
        "clx-ap-2s-192" | "x86-vm-48c96t" => vec![
            f(LocalHitm, 47.0, C2C),
            f(RemoteHitm, 134.0, C2C),
            f(LocalClean, 48.8, CLX_MLC),
        ],
        // Xeon W-2150B within a socket (nviennot/core-to-core-latency issue
        // #95, 40-46 ns), Gold 6242 across.
        "skl-2s-104" => vec![
            f(LocalHitm, 43.0, "nviennot/core-to-core-latency issue #95"),
            f(RemoteHitm, 136.0, C2C),
            f(DramLocal, 80.8, CLX_MLC),
        ],
        // The Platinum 8375C, Ice Lake, stands in for Granite Rapids.
        "gnr-2s-384" => vec![
            f(LocalHitm, 51.0, C2C),
            f(RemoteHitm, 108.0, C2C),
            f(DramLocal, 89.2, ICX_MLC),
        ],
        // Ice Lake's MLC figures stand in for Sierra Forest.
        "srf-2s-192" => vec![f(LocalHitm, 64.2, ICX_MLC), f(RemoteHitm, 127.0, ICX_MLC)],
        // The E5-2690, the same Sandy Bridge-EP die at 2.9 GHz, its ring's
        // part scaled to 2.0 GHz (docs/machines.md 2.3); the L3 hit of
        // Sandy Bridge-E, 30 cycles (techreport.com/articles.x/21987/5) at
        // 2.0 GHz.
        "e5-2650-2s-32" => vec![
            f(LocalHitm, 49.3, C2C),
            f(RemoteHitm, 128.4, C2C),
            f(LocalClean, 15.0, "techreport.com/articles.x/21987/5"),
        ],
        "milan-2s" => vec![
            f(LocalHitm, 23.0, C2C),
            f(NodeHitm, 107.0, C2C),
            f(RemoteHitm, 197.0, C2C),
        ],
        "arm64-8" | "sg2042-64" => vec![f(LocalHitm, 47.0, C2C)],
        // The M1 Pro stands in for the M3 Max.
        "apple-m3max" => vec![f(LocalHitm, 40.0, C2C), f(NodeHitm, 145.0, C2C)],
        // On a socket, the nearest published Xeon (E5-2695 v4); across the
        // machine, NUMAlink's several hundred ns, about 500 ns at the far
        // end (SGI UV white paper; a weak source).
        "uv-512" => vec![
            f(LocalHitm, 44.0, C2C),
            f(FarHitm, 500.0, "SGI UV white paper, NUMAlink 5"),
        ],
        "uv-4096" => vec![
            f(LocalHitm, 44.0, C2C),
            f(FarHitm, 500.0, "SGI UV white paper, NUMAlink 6"),
        ],
        // ScaleMP: InfiniBand about 1-1.2 us between boards (theregister.com
        // 2010-05-26); on a board, the nearest published Xeons.
        "vsmp-32" => vec![
            f(LocalHitm, 44.0, C2C),
            f(FarHitm, 1100.0, "theregister.com 2010-05-26"),
        ],
        // The E5-2695 v4 (Broadwell-EP) on a socket and one QPI hop across;
        // MLC's memory latencies of a 4-socket E7-4800.
        "bdx-ex-4s-192" => vec![
            f(LocalHitm, 44.0, C2C),
            f(RemoteHitm, 118.0, C2C),
            f(DramLocal, 135.0, WILLHALM_E7),
            f(DramRemote, 201.0, WILLHALM_E7),
        ],
        // MLC's memory latencies of the 8468 itself; Ice Lake's transfers
        // stand in.
        "spr-2s-96" => vec![
            f(LocalHitm, 64.2, ICX_MLC),
            f(LocalClean, 60.1, ICX_MLC),
            f(RemoteHitm, 127.0, ICX_MLC),
            f(DramLocal, 95.4, SPR_MLC),
            f(DramRemote, 188.3, SPR_MLC),
        ],
        // The Ryzen 9 7950X's CCDs (AnandTech's review) for Genoa's, Milan
        // across sockets.
        "genoa-2s-384" => vec![
            f(LocalHitm, 17.0, ANANDTECH_ZEN4),
            f(NodeHitm, 79.5, ANANDTECH_ZEN4),
            f(RemoteHitm, 197.0, C2C),
        ],
        // Bergamo's Zen 4c is Zen 4's core and caches: the 7950X's CCD as Genoa's.
        "bergamo-1s-256" => vec![
            f(LocalHitm, 17.0, ANANDTECH_ZEN4),
            f(NodeHitm, 79.5, ANANDTECH_ZEN4),
        ],
        // Cascade Lake's MLC within a socket and one UPI hop away (sockets 0 and 1 share a
        // link); the two-hop figure is derived, not published, so nothing holds it here.
        "clx-8s-448" => vec![
            f(LocalHitm, 49.3, CLX_MLC),
            f(LocalClean, 48.8, CLX_MLC),
            f(RemoteHitm, 113.5, CLX_MLC),
            f(DramLocal, 80.8, CLX_MLC),
        ],
        "graviton2-64" => vec![
            f(LocalHitm, 47.0, C2C),
            f(DramLocal, 81.0, ANANDTECH_GRAVITON2),
        ],
        // Graviton2's memory stands in.
        "graviton3-64" => vec![
            f(LocalHitm, 46.0, C2C),
            f(DramLocal, 81.0, ANANDTECH_GRAVITON2),
        ],
        // Power7 for POWER9: no two cores share an L3 region, so a chip's
        // transfers are node-level.
        "power9-lpar-160" => vec![f(NodeHitm, 173.0, C2C), f(RemoteHitm, 443.0, C2C)],
        other => panic!("{other}: a shipped profile without published figures to check"),
    }
}

/// The published figure at `distance`, if the profile has one.
fn published(figures: &[Figure], distance: Distance) -> Option<f64> {
    figures
        .iter()
        .find(|f| f.distance == distance)
        .map(|f| f.ns)
}

fn machine(profile: &str) -> Machine {
    Machine::new(preset(profile).unwrap()).unwrap()
}

/// The first CPU after CPU 0 that meets it at `level`, on the node `node` asks.
fn cpu_at(m: &Machine, level: Level, node: Option<u32>) -> Option<u32> {
    (1..m.cpus()).find(|&c| m.level(0, c) == level && node.is_none_or(|n| m.node_of(c) == n))
}

/// The first CPU of the first node of another socket than CPU 0's: where
/// the remote figures are measured from.
fn first_cpu_of_another_socket(m: &Machine) -> Option<u32> {
    cpu_at(m, Level::Remote, Some(m.nodes() / m.spec.topology.sockets))
}

/// The simulated latency of one access at `distance`, in ns, on an idle line.
fn idle_ns(m: &Machine, distance: Distance) -> f64 {
    let last_node = m.node_of(m.cpus() - 1);
    let (holder, requester, kind_first) = match distance {
        Distance::LocalHitm => (0, cpu_at(m, Level::Complex, None), AccessKind::Write),
        Distance::LocalClean => (0, cpu_at(m, Level::Complex, None), AccessKind::Read),
        Distance::NodeHitm => (0, cpu_at(m, Level::Node, None), AccessKind::Write),
        Distance::RemoteHitm => (0, first_cpu_of_another_socket(m), AccessKind::Write),
        Distance::FarHitm => (0, Some(m.cpus() - 1), AccessKind::Write),
        Distance::DramLocal | Distance::DramRemote => (0, Some(0), AccessKind::Read),
    };
    let requester = requester.unwrap_or_else(|| panic!("{}: no CPU at {distance:?}", m.name()));
    let home = match distance {
        Distance::DramRemote => last_node,
        _ => 0,
    };
    let mut d = directory(m, home);
    let line = 0;
    if !matches!(distance, Distance::DramLocal | Distance::DramRemote) {
        d.access(m, holder, 0, line, LINE_ADDR, AccessKind::Read, BY);
        d.access(m, holder, IDLE_GAP, line, LINE_ADDR, kind_first, BY);
        if let Distance::LocalClean = distance {
            // A second core's copy makes the line Shared, as MLC's HIT test does.
            let third = (1..m.cpus())
                .find(|&c| c != requester && m.level(0, c) == Level::Complex)
                .unwrap_or(holder);
            d.access(
                m,
                third,
                2 * IDLE_GAP,
                line,
                LINE_ADDR,
                AccessKind::Read,
                BY,
            );
        }
    }
    let now = 3 * IDLE_GAP;
    let out = d.access(m, requester, now, line, LINE_ADDR, AccessKind::Read, BY);
    (out.done - now) as f64 / 1000.0
}

fn within(model: f64, published: f64) -> bool {
    model <= published * TOLERANCE && model >= published / TOLERANCE
}

#[test]
fn every_profile_meets_its_idle_latencies_per_distance() {
    let mut failures = Vec::new();
    for profile in names() {
        let m = machine(profile);
        for fig in idle_figures(profile) {
            let model = idle_ns(&m, fig.distance);
            if !within(model, fig.ns) {
                failures.push(format!(
                    "{profile} {:?}: model {model:.1} ns, published {} ns ({})",
                    fig.distance, fig.ns, fig.source
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// k readers after one write, all in the writer's LLC domain. No published
/// measurement of the slope was found; the published idle figures bound it:
/// the first reader pays the HITM, and every later reader's copy of the
/// Shared line (an inclusive L3's hit, or a forward through the snoop or
/// probe filter) pipelines, so the last completes within HITM + HIT (the
/// server's small read occupancy per request).
#[test]
fn k_readers_after_one_write_pipeline_or_serialise_as_the_llc_does() {
    const K: usize = 8;
    let mut failures = Vec::new();
    for profile in names() {
        let m = machine(profile);
        let figures = idle_figures(profile);
        let hitm = published(&figures, Distance::LocalHitm);
        let hit = published(&figures, Distance::LocalClean);
        let (Some(hitm), Some(hit)) = (hitm, hit) else {
            continue;
        };
        let readers: Vec<u32> = (1..m.cpus())
            .filter(|&c| m.level(0, c) == Level::Complex)
            .take(K)
            .collect();
        if readers.len() < K {
            continue;
        }
        let model = fan_out_ns(&m, &readers);
        let bound = hitm + hit;
        if model < hitm / TOLERANCE || model > bound * TOLERANCE {
            failures.push(format!(
                "{profile}: {K} readers done in {model:.1} ns, published bound {hitm} to {bound:.1} ns"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The nearest published contended figure: on a Skylake client (4 cores,
/// one ring), `lock add` on one line from 2 to 4 cores runs one increment
/// every 22-24 ns (travisdowns/concurrency-hierarchy-bench results/skl,
/// "atomic add"), where one core-to-core hop takes 20 ns (i7-6700K,
/// nviennot/core-to-core-latency). A profile with a transfer occupancy (the
/// Intel ones, fitted to that curve) is held on one socket to an increment
/// every occupancy and RMW; one without, to 1.15 hops an increment (the
/// same curve read as hops, queueing and the atomic's own cost included).
/// No machine across sockets has a published contended figure, nor a
/// remote occupancy: each profile is held there to 1.15 of its own
/// measured hop. The two shipped parts with a published
/// contended figure of their own are judged in the validation suite, with
/// the workloads as their benchmarks wrote them, and left out here: the
/// Graviton2's (8.5 ns with 2 threads and 9.4 ns with 16,
/// travisdowns/concurrency-hierarchy-bench results/g2-16) is of relaxed
/// adds whose result nothing uses, which a weakly ordered core posts, not
/// of the fully ordered RMW this check times; the Apple M3 Max's (11.38 ns
/// an increment with 2 domains, ocaml-multicore/multicore-bench pull
/// request #25) is one the model does not meet (it moves the line at every
/// increment, where that core does not).
const INCREMENT_PER_HOP: f64 = 23.0 / 20.0;
const JUDGED_BY_THE_VALIDATION_SUITE: &[&str] = &["apple-m3max", "graviton2-64"];

#[test]
fn contended_rmw_throughput_on_one_socket_and_across_two() {
    let mut failures = Vec::new();
    for profile in names().filter(|p| !JUDGED_BY_THE_VALIDATION_SUITE.contains(p)) {
        let m = machine(profile);
        let figures = idle_figures(profile);
        let local = published(&figures, Distance::LocalHitm);
        let remote = published(&figures, Distance::RemoteHitm);
        let same: Vec<u32> = std::iter::once(0)
            .chain((1..m.cpus()).filter(|&c| m.level(0, c) == Level::Complex))
            .take(4)
            .collect();
        if let (Some(hop), 4) = (local, same.len()) {
            let model = contended_rmw_ns(&m, &same, 200);
            let c = &m.spec.coherence;
            let expected = c
                .llc_transfer_occupancy
                .or(c.transfer_occupancy)
                .map_or(INCREMENT_PER_HOP * hop, |occupancy| {
                    occupancy + m.spec.latency.rmw
                });
            if !within(model, expected) {
                failures.push(format!(
                    "{profile}: 4 CPUs of one LLC, {model:.1} ns an increment, expected about {expected:.1}"
                ));
            }
        }
        if let (Some(hop), Some(other)) = (remote, first_cpu_of_another_socket(&m)) {
            // One CPU on each socket: every hand-off crosses.
            let model = contended_rmw_ns(&m, &[0, other], 200);
            if !within(model, INCREMENT_PER_HOP * hop) {
                failures.push(format!(
                    "{profile}: one CPU on each of two sockets, {model:.1} ns an increment, expected about {:.1}",
                    INCREMENT_PER_HOP * hop
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The model meets a contended curve as well as a round trip: on a 4-core,
/// one-ring machine with a Skylake client's 20 ns hop (i7-6700K,
/// nviennot/core-to-core-latency) and a 6 ns RMW, it meets that part's
/// `lock add` curve, an increment every 22.0, 23.3 and 24.1 ns over 2, 3
/// and 4 cores (travisdowns/concurrency-hierarchy-bench results/skl), with
/// occupancies of 16.0, 17.3 and 18.1 ns and no burst, near the 14 ns its
/// round trip less the RMW gives.
#[test]
fn a_skylake_client_s_lock_add_is_met_by_an_occupancy_near_its_round_trip_less_the_rmw() {
    let client = |occupancy: f64| {
        let mut spec = preset("skl-2s-104").unwrap();
        let t = &mut spec.topology;
        (
            t.sockets,
            t.cores_per_socket,
            t.threads_per_core,
            t.cores_per_llc,
        ) = (1, 4, 1, 4);
        spec.latency.llc = 20.0;
        spec.latency.node = 20.0;
        spec.latency.remote = futexsim::machine::RemoteSpec::Matrix(vec![vec![0.0]]);
        spec.latency.dram_remote = None;
        spec.coherence.transfer_occupancy = Some(occupancy);
        Machine::new(spec).unwrap()
    };
    for (cores, occupancy, measured) in [(2, 16.0, 22.0), (3, 17.3, 23.3), (4, 18.1, 24.1)] {
        let cpus: Vec<u32> = (0..cores).collect();
        let model = contended_rmw_ns(&client(occupancy), &cpus, 200);
        assert!(
            (model - measured).abs() < 0.5,
            "{cores} cores: {model:.2} ns an increment, measured {measured}"
        );
    }
}

/// A core-to-core round trip (nviennot/core-to-core-latency: a
/// compare-and-swap ping-pong of two cores on one line, half the round trip
/// a hand-off) is, in the model, two cores' back-to-back RMWs on one line,
/// each hand-off one occupancy at the pair's level and the RMW: every
/// profile fitted so meets the round trip its occupancies were fitted to, at
/// each level (inside an LLC domain, across a node's domains, across
/// nodes), where one hop a transfer (the occupancies left out) gives the
/// RMW more. Where the part has no curve of its own the figure is the
/// stand-in part's whose latencies the profile takes (each file says which).
#[test]
fn each_fitted_profile_meets_its_core_to_core_round_trips_at_every_level() {
    let fits: &[(&str, u32, f64)] = &[
        ("graviton2-64", 1, 47.0),
        ("graviton3-64", 1, 46.0),
        ("arm64-8", 1, 47.0),
        ("sg2042-64", 1, 47.0),
        // EPYC 7R13: inside a CCX, across CCXs, across sockets.
        ("milan-2s", 1, 23.0),
        ("milan-2s", 8, 100.0),
        ("milan-2s", 48, 197.0),
        // The Ryzen 9 7950X's medians inside and across CCDs; the 7R13's across sockets.
        ("genoa-2s-384", 1, 15.7),
        ("genoa-2s-384", 8, 72.7),
        ("genoa-2s-384", 96, 197.0),
        ("bergamo-1s-256", 1, 15.7),
        ("bergamo-1s-256", 8, 72.7),
        // The Apple M1 Pro inside a performance cluster and across the two.
        ("apple-m3max", 1, 40.0),
        ("apple-m3max", 6, 145.0),
        // The IBM Power7 within a chip and across sockets.
        ("power9-lpar-160", 1, 173.0),
        ("power9-lpar-160", 10, 443.0),
        // The Xeon Gold 6242's medians in a socket and across (48.1, 141.5
        // ns), each at most the profile's hop.
        ("clx-2s", 1, 48.1),
        ("clx-2s", 16, 114.0),
        ("clx-8s-448", 1, 48.1),
        ("clx-8s-448", 28, 114.0),
        ("cpl-4s-224", 1, 48.1),
        ("cpl-4s-224", 28, 114.0),
        ("skl-2s-104", 1, 43.0),
        ("skl-2s-104", 26, 136.0),
        // The Xeon Platinum 8275CL's (46.6, 134.0 ns); another die of the
        // package is one remote hop on clx-ap-2s-192.
        ("clx-ap-2s-192", 1, 46.6),
        ("clx-ap-2s-192", 24, 134.0),
        ("x86-vm-48c96t", 1, 46.6),
        ("x86-vm-48c96t", 24, 134.0),
        // The Xeon Platinum 8375C's (51.3, 107.8 ns).
        ("icx-2s", 1, 51.3),
        ("icx-2s", 32, 107.8),
        ("srf-2s-192", 1, 51.3),
        ("srf-2s-192", 96, 107.8),
        ("spr-2s-96", 1, 51.3),
        ("gnr-2s-384", 1, 51.0),
        ("gnr-2s-384", 96, 107.8),
        // The Xeon E5-2695 v4's (43.6, 118.2 ns).
        ("bdx-ex-4s-192", 1, 43.6),
        ("bdx-ex-4s-192", 24, 118.0),
        ("uv-512", 1, 43.6),
        ("uv-4096", 1, 43.6),
        ("vsmp-32", 1, 43.6),
        // The Xeon E5-2690's (34.0, 113.1 ns at 2.9 GHz), scaled to the
        // E5-2650's 2.0 GHz as its latencies are.
        ("e5-2650-2s-32", 1, 49.3),
        ("e5-2650-2s-32", 8, 128.4),
    ];
    for &(profile, other, measured) in fits {
        let spec = preset(profile).unwrap();
        let fitted = contended_rmw_ns(&Machine::new(spec.clone()).unwrap(), &[0, other], 200);
        assert!(
            (fitted - measured).abs() < 0.5_f64.max(measured * 0.005),
            "{profile}, CPUs 0 and {other}: {fitted:.2} ns a hand-off, measured {measured}"
        );
        let rmw = spec.latency.rmw;
        let mut one_hop = spec;
        let c = &mut one_hop.coherence;
        (
            c.llc_transfer_occupancy,
            c.transfer_occupancy,
            c.remote_transfer_occupancy,
        ) = (None, None, None);
        let hop = contended_rmw_ns(&Machine::new(one_hop).unwrap(), &[0, other], 200);
        // An occupancy is at most its hop, so one hop a transfer costs at
        // least the RMW more (0.01 ns for the profiles' rounding).
        assert!(
            hop > fitted + rmw - 0.01,
            "{profile}, CPUs 0 and {other}: {hop:.2} ns a hand-off at one hop, {fitted:.2} fitted, RMW {rmw} ns"
        );
    }
}

/// The holder's burst: on the M3 Max's two cores of one cluster, each
/// increment 1.73 ns in the holder's L1 and each hand-off 40 ns, a holder
/// that keeps incrementing while the queued request's snoop travels
/// (`snoop_delay`) does about one more increment per 1.73 ns of travel
/// before the line leaves, so the time per increment falls as the delay
/// grows, and with no delay the line moves at every increment.
#[test]
fn the_holder_increments_more_between_hand_offs_the_longer_the_snoop_travels() {
    let with_delay = |ns: f64| {
        let mut spec = preset("apple-m3max").unwrap();
        spec.coherence.snoop_delay = Some(ns);
        contended_rmw_ns(&Machine::new(spec).unwrap(), &[0, 1], 200)
    };
    let delays = [0.0, 2.0, 5.0, 10.0, 20.0];
    let per_increment: Vec<f64> = delays.iter().map(|&d| with_delay(d)).collect();
    assert!((per_increment[0] - 40.0).abs() < 0.5, "{per_increment:?}");
    for (pair, d) in per_increment.windows(2).zip(&delays[1..]) {
        assert!(
            pair[1] < pair[0],
            "{d} ns of snoop travel: {per_increment:?}"
        );
    }
    // 20 ns of travel holds about 11 increments of 1.73 ns: the 40 ns
    // hand-off and its burst make about 12 increments.
    let last = per_increment[delays.len() - 1];
    assert!(last < 40.0 / 10.0, "{per_increment:?}");
}

/// icx-2s with the given local batch.
fn icx_with_batch(batch: u32) -> Machine {
    let mut spec = preset("icx-2s").unwrap();
    spec.coherence.local_batch = Some(batch);
    Machine::new(spec).unwrap()
}

/// `per` CPUs of CPU 0's LLC domain, then `per` of the first domain of the
/// second socket, one thread per core.
fn both_sockets(m: &Machine, per: usize) -> Vec<u32> {
    let other = cpu_at(m, Level::Remote, Some(m.nodes() / m.spec.topology.sockets)).unwrap();
    let of = |cpu: u32| {
        (0..m.cpus())
            .filter(move |&c| m.llc_of(c) == m.llc_of(cpu))
            // A core's first thread: its sibling, if any, is numbered after it.
            .filter(|&c| m.sibling_of(c).is_none_or(|s| s > c))
            .take(per)
    };
    of(0).chain(of(other)).collect()
}

/// The longest run of increments served in one LLC domain in a row, past
/// the warm-up.
fn longest_run(m: &Machine, cpus: &[u32], rounds: usize) -> usize {
    let served = contended_rmw(m, cpus, rounds);
    let domains: Vec<u32> = served[cpus.len() * 2..]
        .iter()
        .map(|i| m.llc_of(cpus[i.cpu]))
        .collect();
    domains
        .chunk_by(|a, b| a == b)
        .map(<[u32]>::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn a_contended_line_stays_in_one_socket_for_at_most_its_local_batch_while_the_other_waits() {
    // Four CPUs on each socket increment one line back to back, so a
    // request from the other socket always waits: the socket holding the
    // line keeps it for exactly its batch, the grant that brought it in
    // included. Oldest first (a batch of 0) cycles through the eight in
    // the order they first asked: four in a row on each socket.
    for (batch, run) in [(0, 4), (1, 1), (2, 2), (3, 3), (6, 6)] {
        let m = icx_with_batch(batch);
        let cpus = both_sockets(&m, 4);
        assert_eq!(cpus.len(), 8);
        assert_eq!(longest_run(&m, &cpus, 100), run, "local_batch = {batch}");
        // The same requests grant in the same order every time.
        assert_eq!(contended_rmw(&m, &cpus, 50), contended_rmw(&m, &cpus, 50));
    }
}

/// Crossing sockets costs a contended atomic more than staying in one, as
/// David, Guerraoui and Trigonakis measure on every multi-socket machine
/// they test (SOSP 2013, "Everything you always wanted to know about
/// synchronization but were afraid to ask": an atomic on a line another
/// socket holds pays the cross-socket transfer): the more grants a socket
/// keeps the line for, the fewer hand-offs cross and the cheaper each
/// increment, down to the one-socket figure.
#[test]
fn contended_increments_cost_more_the_more_hand_offs_cross_sockets() {
    for profile in names() {
        let m = machine(profile);
        if m.spec.topology.sockets < 2 || m.hierarchy.local_batch != 0 {
            continue;
        }
        let Some(other) = cpu_at(&m, Level::Remote, Some(m.nodes() / m.spec.topology.sockets))
        else {
            continue;
        };
        let one_socket: Vec<u32> = std::iter::once(0)
            .chain((1..m.cpus()).filter(|&c| m.level(0, c) == Level::Complex))
            .take(2)
            .collect();
        if one_socket.len() < 2 {
            continue;
        }
        let local = contended_rmw_ns(&m, &one_socket, 200);
        let across = contended_rmw_ns(&m, &[0, other], 200);
        assert!(
            across > local,
            "{profile}: {across:.1} ns an increment across sockets, {local:.1} on one"
        );
    }
    let per_op = |batch| {
        let m = icx_with_batch(batch);
        contended_rmw_ns(&m, &both_sockets(&m, 4), 200)
    };
    let every_grant_crosses = per_op(1);
    let m = icx_with_batch(1);
    let across = both_sockets(&m, 1);
    let two_cpus_across = contended_rmw_ns(&m, &across, 200);
    assert!(
        (every_grant_crosses / two_cpus_across - 1.0).abs() < 0.05,
        "a batch of 1 hands every grant across: {every_grant_crosses:.1} ns against {two_cpus_across:.1}"
    );
    let batches: Vec<f64> = [1, 2, 4, 8].into_iter().map(per_op).collect();
    assert!(
        batches.windows(2).all(|w| w[1] < w[0]),
        "longer batches cross less: {batches:?}"
    );
    let one_socket = contended_rmw_ns(&m, &both_sockets(&m, 4)[..4], 200);
    assert!(
        batches[3] > one_socket,
        "{batches:?} against {one_socket:.1} on one socket"
    );
}
