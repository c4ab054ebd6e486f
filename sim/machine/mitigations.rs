//! What the kernel's defences against speculative execution add to every
//! syscall's entry and exit, per part and per kernel version.
//!
//! A profile states its CPU's facts as the kernel reads them
//! (`cpu_vuln_whitelist`, `cpu_vuln_blacklist` and IA32_ARCH_CAPABILITIES in
//! arch/x86/kernel/cpu/common.c) and the kernel version its cases ran; the
//! version's selection logic (arch/x86/kernel/cpu/bugs.c) decides which
//! defences run, and each is priced in cycles measured on the nearest core,
//! at the profile's clock. docs/machines.md §2.2 gives the sources.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A kernel release, major and minor (`"6.9"`): what decides which
/// defences a part gets. Release candidates count as their release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct KernelVersion {
    pub major: u16,
    pub minor: u16,
}

impl KernelVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        KernelVersion { major, minor }
    }
}

impl TryFrom<String> for KernelVersion {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let refuse = || format!("kernel version `{text}` must be MAJOR.MINOR, such as \"6.9\"");
        let (major, minor) = text.split_once('.').ok_or_else(refuse)?;
        Ok(KernelVersion {
            major: major.parse().map_err(|_| refuse())?,
            minor: minor.parse().map_err(|_| refuse())?,
        })
    }
}

impl From<KernelVersion> for String {
    fn from(v: KernelVersion) -> String {
        v.to_string()
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Page-table isolation, on Meltdown parts (v4.15, 2018).
const PTI_FROM: KernelVersion = KernelVersion::new(4, 15);
/// Retpolines, spectre_v2's first defence (v4.15).
const RETPOLINE_FROM: KernelVersion = KernelVersion::new(4, 15);
/// Enhanced IBRS chosen where the part has it (v4.19, "x86/speculation:
/// Support Enhanced IBRS on future CPUs").
const EIBRS_FROM: KernelVersion = KernelVersion::new(4, 19);
/// The MDS buffer clear on every return to user space (v5.1).
const MDS_FROM: KernelVersion = KernelVersion::new(5, 1);
/// IBRS on entry for Retbleed parts without enhanced IBRS (v5.19).
const IBRS_ENTRY_FROM: KernelVersion = KernelVersion::new(5, 19);
/// The branch history clear on entry (`spectre_bhi=on`), and the syscall
/// table's indirect call turned into a switch of direct calls
/// (1e3ad78334a6, "x86/syscall: Don't force use of indirect calls for
/// system calls"): both v6.9.
const BHI_FROM: KernelVersion = KernelVersion::new(6, 9);
const DIRECT_DISPATCH_FROM: KernelVersion = KernelVersion::new(6, 9);

/// A defence the kernel runs on every syscall entry and exit, named as its
/// command line names it (`pti=`, `spectre_v2=ibrs`, `spectre_v2=retpoline`,
/// `mds=`, `spectre_bhi=`). See docs/machines.md for the ones not priced
/// (RSB filling, AMD's return untraining).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mitigation {
    /// Page-table isolation (Meltdown): two CR3 writes a syscall.
    Pti,
    /// IBRS set in IA32_SPEC_CTRL on entry and cleared on exit
    /// (`spectre_v2=ibrs`): from 5.19 on Intel Retbleed parts without
    /// enhanced IBRS, Skylake-SP among them.
    Ibrs,
    /// The syscall table's indirect call through a generic retpoline
    /// (`spectre_v2=retpoline`), until 6.9 made it a direct call.
    Retpoline,
    /// The MDS buffer clear: VERW on every return to user space (from 5.1
    /// on Intel cores without MDS_NO).
    Mds,
    /// The branch history clear: clear_bhb_loop on every entry (from 6.9
    /// on Intel cores without BHI_DIS_S, unless retpolines already cover
    /// them).
    Bhi,
}

/// The cores whose defences were measured instruction by instruction
/// (Behrens, Belay, Kaashoek, "Performance Evolution of Mitigating Transient
/// Execution Attacks", EuroSys 2022: timestamp-counter ticks, each the mean
/// of a million runs, on an E5-2640 v4, an i7-6600U, a Xeon Silver 4210R
/// and a Xeon Gold 6354), and the core a profile's part is priced as: its
/// own where it was measured, else the nearest one, which the profile's
/// comment names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MeasuredCore {
    /// Xeon E5-2640 v4, 2.4 GHz.
    Broadwell,
    /// Core i7-6600U, 2.6 GHz: the Skylake core Skylake-SP shares.
    SkylakeClient,
    /// Xeon Silver 4210R, 2.4 GHz.
    CascadeLake,
    /// Xeon Gold 6354, 3.0 GHz.
    IceLakeServer,
}

impl MeasuredCore {
    /// One `mov` to CR3 that keeps the TLB (PCID's no-flush bit): the
    /// "swap cr3" column. Not measured where the part is not open to
    /// Meltdown (Cascade Lake, Ice Lake); Skylake's stands in there, the
    /// same core.
    fn cr3_write_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 206.0,
            MeasuredCore::SkylakeClient
            | MeasuredCore::CascadeLake
            | MeasuredCore::IceLakeServer => 191.0,
        }
    }

    /// VERW with the MD_CLEAR microcode. Ice Lake is not open to MDS and
    /// was not measured; Cascade Lake's stands in.
    fn verw_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 610.0,
            MeasuredCore::SkylakeClient => 518.0,
            MeasuredCore::CascadeLake | MeasuredCore::IceLakeServer => 458.0,
        }
    }

    /// What a generic retpoline adds to one indirect call.
    fn retpoline_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 28.0,
            MeasuredCore::SkylakeClient => 19.0,
            MeasuredCore::CascadeLake => 49.0,
            MeasuredCore::IceLakeServer => 50.0,
        }
    }

    /// clear_bhb_loop on entry: what it added to a will-it-scale futex4
    /// call, at the part's base clock (kernel test robot, reply of
    /// 2024-04-22 to "x86/syscall: Don't force use of indirect calls for
    /// system calls", Message-ID ZiYUpxCTyh1uEgeO@yujie-X299): Ice Lake-SP,
    /// a Xeon Gold 6346 at 3.1 GHz, 7,763,496 to 6,686,457 calls a second
    /// (20.75 ns); Cascade Lake, a Xeon Platinum 8260L at 2.4 GHz, 34 ns.
    /// Cascade Lake's stands in for the earlier cores (a loop of branches,
    /// the same on each).
    fn bhb_clear_cycles(self) -> f64 {
        match self {
            MeasuredCore::IceLakeServer => (1e9 / 6_686_457.0 - 1e9 / 7_763_496.0) * 3.1,
            MeasuredCore::Broadwell | MeasuredCore::SkylakeClient | MeasuredCore::CascadeLake => {
                34.0 * 2.4
            }
        }
    }
}

/// IBRS toggled on entry and exit: 488 ns a syscall on a Skylake, page
/// tables isolated in both runs, 360 ns without and 848 ns with (DragonFly
/// BSD commit 8ed0657196, "kernel - Implement spectre mitigations part 1",
/// 2018), the same two IA32_SPEC_CTRL writes Linux's `spectre_v2=ibrs`
/// makes. The commit names no clock, so the figure is used as measured,
/// not scaled.
const IBRS_NS: f64 = 488.0;

/// Without PCID every CR3 write flushes the TLB, and the syscall walks the
/// page tables again for each page it then touches. Nobody measured it
/// apart: 1000 cycles, plausibly 400-4000 (the 10-40 pages of a syscall's
/// path, user and kernel, at 40-100 cycles a walk). No shipped profile
/// lacks PCID (Westmere and later have it).
const PTI_REFILL_CYCLES: f64 = 1000.0;

/// A CPU's facts as the kernel's speculation code reads them: which flaws
/// it is open to and which controls it has. Intel cores only: the AMD, Arm,
/// POWER and RISC-V profiles state none, as none of their syscall-path
/// defences is priced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuFacts {
    /// The measured core whose cycles price this part's defences.
    pub priced_as: MeasuredCore,
    /// CPUID.01H:ECX.PCID (Westmere and later): CR3 writes keep the TLB.
    pub pcid: bool,
    /// Open to Meltdown: neither NO_MELTDOWN nor RDCL_NO.
    pub meltdown: bool,
    /// Open to MDS: neither NO_MDS nor MDS_NO.
    pub mds: bool,
    /// Enhanced IBRS (ARCH_CAP_IBRS_ALL), set once at boot.
    pub eibrs: bool,
    /// On cpu_vuln_blacklist's RETBLEED list.
    pub retbleed: bool,
    /// BHI_CTRL: the kernel sets BHI_DIS_S once instead of clearing the
    /// branch history on every entry.
    pub bhi_ctrl: bool,
}

/// spectre_v2_select_mitigation()'s choice on a part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpectreV2 {
    None,
    Retpoline,
    Ibrs,
    Eibrs,
}

impl CpuFacts {
    /// spectre_v2_select_mitigation() under `spectre_v2=auto`, read in
    /// v4.15, v4.19, v5.19, v6.9 and v6.15: enhanced IBRS wherever the part
    /// enumerates it (from 4.19); else, from 5.19, IBRS on every entry on
    /// an Intel part the kernel marks X86_BUG_RETBLEED (CONFIG_*IBRS_ENTRY,
    /// on by default); else retpolines (spectre_v2_select_retpoline: the
    /// generic thunk on Intel). 6.15 moves the IBRS choice into
    /// spectre_v2_update_mitigation() with the same conditions.
    fn spectre_v2(&self, version: KernelVersion) -> SpectreV2 {
        if version < RETPOLINE_FROM {
            SpectreV2::None
        } else if self.eibrs && version >= EIBRS_FROM {
            SpectreV2::Eibrs
        } else if self.retbleed && !self.eibrs && version >= IBRS_ENTRY_FROM {
            SpectreV2::Ibrs
        } else {
            SpectreV2::Retpoline
        }
    }

    /// The defences `version` runs on every syscall of this part, in order.
    pub fn selected(&self, version: KernelVersion) -> Vec<Mitigation> {
        let spectre_v2 = self.spectre_v2(version);
        let mut applied = Vec::new();
        if self.meltdown && version >= PTI_FROM {
            applied.push(Mitigation::Pti);
        }
        if spectre_v2 == SpectreV2::Ibrs {
            applied.push(Mitigation::Ibrs);
        }
        if spectre_v2 == SpectreV2::Retpoline && version < DIRECT_DISPATCH_FROM {
            applied.push(Mitigation::Retpoline);
        }
        // mds_select_mitigation(), v5.1: VERW on every return to user
        // space where the part is open to MDS. TAA (5.4) and MMIO stale
        // data (5.19) add the same VERW only on a part open to MDS or with
        // TSX on, which the kernel's default (CONFIG_X86_INTEL_TSX_MODE_OFF)
        // turns off.
        if self.mds && version >= MDS_FROM {
            applied.push(Mitigation::Mds);
        }
        // bhi_select_mitigation(), v6.9: retpolines cover BHI on a part
        // without RRSBA behaviour, which only enhanced-IBRS parts enumerate;
        // a part with BHI_CTRL sets BHI_DIS_S once (spec_ctrl_bhi_dis);
        // else clear_bhb_loop runs on every syscall. 6.9-rc3 cleared only
        // on VM exit by default (spectre_bhi=auto); 6.9-rc4 removed `auto`
        // and the released 6.9 defaults to the syscall clear
        // (CONFIG_MITIGATION_SPECTRE_BHI). From 6.17 the attack-vector
        // controls keep the same default.
        if version >= BHI_FROM && spectre_v2 != SpectreV2::Retpoline && !self.bhi_ctrl {
            applied.push(Mitigation::Bhi);
        }
        applied
    }

    /// What `mitigation` adds to one syscall on this part at `clock_ghz`,
    /// in ns: the measured core's cycles at the profile's clock.
    pub fn syscall_ns(&self, mitigation: Mitigation, clock_ghz: f64) -> f64 {
        let core = self.priced_as;
        let cycles = match mitigation {
            Mitigation::Ibrs => return IBRS_NS,
            Mitigation::Pti if self.pcid => 2.0 * core.cr3_write_cycles(),
            Mitigation::Pti => 2.0 * core.cr3_write_cycles() + PTI_REFILL_CYCLES,
            Mitigation::Retpoline => core.retpoline_cycles(),
            Mitigation::Mds => core.verw_cycles(),
            Mitigation::Bhi => core.bhb_clear_cycles(),
        };
        cycles / clock_ghz
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SANDY_BRIDGE_EP: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::Broadwell,
        pcid: true,
        meltdown: true,
        mds: true,
        eibrs: false,
        retbleed: false,
        bhi_ctrl: false,
    };
    const SKYLAKE_SP: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::SkylakeClient,
        retbleed: true,
        ..SANDY_BRIDGE_EP
    };
    const CASCADE_LAKE: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::CascadeLake,
        pcid: true,
        meltdown: false,
        mds: false,
        eibrs: true,
        retbleed: true,
        bhi_ctrl: false,
    };
    const SAPPHIRE_RAPIDS: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::IceLakeServer,
        bhi_ctrl: true,
        ..CASCADE_LAKE
    };
    const fn v(major: u16, minor: u16) -> KernelVersion {
        KernelVersion::new(major, minor)
    }
    use Mitigation::*;

    #[test]
    fn sandy_bridge_isolates_page_tables_and_clears_buffers_but_never_toggles_ibrs() {
        assert_eq!(SANDY_BRIDGE_EP.selected(v(6, 15)), vec![Pti, Mds]);
        // Before 6.9 the syscall table's indirect call goes through a
        // retpoline; before 5.1 there is no VERW; before 4.15 nothing.
        assert_eq!(SANDY_BRIDGE_EP.selected(v(5, 0)), vec![Pti, Retpoline]);
        assert_eq!(SANDY_BRIDGE_EP.selected(v(4, 14)), vec![]);
        // Retpolines cover BHI on a part without RRSBA: 6.9 adds no clear.
        assert!(!SANDY_BRIDGE_EP.selected(v(6, 9)).contains(&Bhi));
    }

    #[test]
    fn skylake_sp_takes_ibrs_on_entry_from_5_19_and_the_branch_history_clear_from_6_9() {
        assert_eq!(SKYLAKE_SP.selected(v(5, 6)), vec![Pti, Retpoline, Mds]);
        assert_eq!(SKYLAKE_SP.selected(v(6, 8)), vec![Pti, Ibrs, Mds]);
        assert_eq!(SKYLAKE_SP.selected(v(6, 9)), vec![Pti, Ibrs, Mds, Bhi]);
    }

    #[test]
    fn cascade_lake_has_no_pti_and_pays_only_the_branch_history_clear_from_6_9() {
        assert_eq!(CASCADE_LAKE.selected(v(5, 12)), vec![]);
        assert_eq!(CASCADE_LAKE.selected(v(6, 8)), vec![]);
        assert_eq!(CASCADE_LAKE.selected(v(6, 9)), vec![Bhi]);
        // A part with BHI_DIS_S sets it once at boot.
        assert_eq!(SAPPHIRE_RAPIDS.selected(v(6, 15)), vec![]);
    }

    #[test]
    fn each_defence_costs_its_measured_cycles_at_the_profiles_clock() {
        let ns = |facts: &CpuFacts, m, ghz| facts.syscall_ns(m, ghz);
        // Broadwell's two CR3 writes and its VERW, at Sandy Bridge-EP's 2 GHz.
        assert_eq!(ns(&SANDY_BRIDGE_EP, Pti, 2.0), 206.0);
        assert_eq!(ns(&SANDY_BRIDGE_EP, Mds, 2.0), 305.0);
        // A faster clock takes fewer ns for the same cycles.
        assert_eq!(ns(&SKYLAKE_SP, Mds, 2.6), 518.0 / 2.6);
        assert!(ns(&SKYLAKE_SP, Pti, 3.0) < ns(&SKYLAKE_SP, Pti, 2.0));
        // IBRS is used as measured: its source names no clock.
        assert_eq!(ns(&SKYLAKE_SP, Ibrs, 2.0), ns(&SKYLAKE_SP, Ibrs, 3.0));
        // Ice Lake-SP's clear at its own 3.1 GHz is what it was measured at.
        let icx = CpuFacts {
            priced_as: MeasuredCore::IceLakeServer,
            ..CASCADE_LAKE
        };
        assert!((ns(&icx, Bhi, 3.1) - 20.75).abs() < 0.01);
    }

    #[test]
    fn without_pcid_page_table_isolation_pays_the_tlb_refill_too() {
        let without = CpuFacts {
            pcid: false,
            ..SANDY_BRIDGE_EP
        };
        let refill = without.syscall_ns(Pti, 2.0) - SANDY_BRIDGE_EP.syscall_ns(Pti, 2.0);
        assert_eq!(refill, PTI_REFILL_CYCLES / 2.0);
    }

    #[test]
    fn a_kernel_version_reads_as_major_dot_minor() {
        let read = |s: &str| KernelVersion::try_from(s.to_string());
        assert_eq!(read("6.9"), Ok(v(6, 9)));
        assert!(v(6, 10) > v(6, 9));
        assert!(read("6").is_err());
        assert!(read("six.nine").is_err());
        assert_eq!(String::from(v(5, 19)), "5.19");
    }
}
