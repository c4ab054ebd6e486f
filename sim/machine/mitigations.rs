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

/// A kernel release, major and minor (`"6.9"`), or one of its release
/// candidates (`"6.16-rc1"`): what decides which defences a part gets. A
/// candidate comes before its release and after the release before it, so a
/// defence merged late in a cycle (TSA's, in 6.16-rc6) is absent from the
/// earlier candidates of that cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct KernelVersion {
    pub major: u16,
    pub minor: u16,
    /// The release candidate, or none for the release itself.
    pub rc: Option<u16>,
}

impl KernelVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        KernelVersion {
            major,
            minor,
            rc: None,
        }
    }

    pub const fn candidate(major: u16, minor: u16, rc: u16) -> Self {
        KernelVersion {
            major,
            minor,
            rc: Some(rc),
        }
    }

    /// Where the version sits in time: a release sorts after all of its
    /// candidates.
    fn order_key(&self) -> (u16, u16, u32) {
        let rc = self.rc.map_or(u32::MAX, u32::from);
        (self.major, self.minor, rc)
    }
}

impl PartialOrd for KernelVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KernelVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

impl TryFrom<String> for KernelVersion {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let refuse = || {
            format!("kernel version `{text}` must be MAJOR.MINOR or MAJOR.MINOR-rcN, such as \"6.9\" or \"6.16-rc1\"")
        };
        let (release, rc) = match text.split_once("-rc") {
            Some((release, rc)) => (release, Some(rc.parse().map_err(|_| refuse())?)),
            None => (text.as_str(), None),
        };
        let (major, minor) = release.split_once('.').ok_or_else(refuse)?;
        Ok(KernelVersion {
            major: major.parse().map_err(|_| refuse())?,
            minor: minor.parse().map_err(|_| refuse())?,
            rc,
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
        write!(f, "{}.{}", self.major, self.minor)?;
        match self.rc {
            Some(rc) => write!(f, "-rc{rc}"),
            None => Ok(()),
        }
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
/// AMD parts took the LFENCE retpoline (`retpoline,amd`) until v5.17 made
/// the generic one their default (244d00b5dd47, "x86/speculation: Use
/// generic retpoline by default on AMD"), as the LFENCE form was found open
/// to a race.
const GENERIC_RETPOLINE_ON_AMD_FROM: KernelVersion = KernelVersion::new(5, 17);
/// Retbleed's untraining on AMD Zen 1 and Zen 2 (`retbleed=unret`, the
/// default on AMD from v5.19: a149180fbcf3, "x86: Add magic AMD
/// return-thunk").
const UNRET_FROM: KernelVersion = KernelVersion::new(5, 19);
/// Automatic IBRS (Zen 4) taken as spectre_v2's enhanced IBRS (v6.3:
/// e7862eda309e, "x86/cpu: Support AMD Automatic IBRS").
const AUTO_IBRS_FROM: KernelVersion = KernelVersion::new(6, 3);
/// The SRSO ("Inception") safe return on Zen 1 to Zen 4 (v6.5:
/// fb3bd914b3ec, "x86/srso: Add a Speculative RAS Overflow mitigation").
const SRSO_FROM: KernelVersion = KernelVersion::new(6, 5);
/// The Transient Scheduler Attacks buffer clear on Zen 3 and Zen 4
/// (d8010d4ba43e, "x86/bugs: Add a Transient Scheduler Attacks
/// mitigation"), merged on the disclosure day, 2025-07-08, between
/// v6.16-rc5 and v6.16-rc6: its first tag is 6.16-rc6.
const TSA_FROM: KernelVersion = KernelVersion::candidate(6, 16, 6);

/// A defence the kernel runs on every syscall entry and exit, named as its
/// command line names it (`pti=`, `spectre_v2=ibrs`, `spectre_v2=retpoline`,
/// `mds=`, `spectre_bhi=`, `retbleed=`, `spec_rstack_overflow=`, `tsa=`).
/// See docs/machines.md for the ones not priced (RSB filling on a context
/// switch, Indirect Target Selection's aligned thunks, which add only
/// direct jumps the core predicts to a futex syscall).
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
    /// The syscall table's indirect call through an LFENCE and a plain
    /// indirect call (`spectre_v2=retpoline,lfence`): AMD's default until
    /// 5.17.
    RetpolineLfence,
    /// Retbleed's untraining (`retbleed=unret`): zen_untrain_ret on every
    /// entry, and every kernel return a jump to the return thunk (jmp2ret),
    /// on AMD Zen 1 and Zen 2 from 5.19 until SRSO's safe return replaced it
    /// in 6.5.
    UntrainRet,
    /// SRSO's safe return (`spec_rstack_overflow=safe-ret`): every kernel
    /// return goes through a thunk that makes the return predictor miss it,
    /// and entry untrains once; on AMD Zen 1 to Zen 4 from 6.5.
    SafeRet,
    /// An indirect branch prediction barrier on every entry
    /// (`retbleed=ibpb`, `spec_rstack_overflow=ibpb`): never the default,
    /// stated outright where a machine booted with it.
    IbpbEntry,
    /// The Transient Scheduler Attacks clear (`tsa=on`, the default): VERW
    /// on every return to user space, on AMD Zen 3 and Zen 4 with the
    /// microcode that makes VERW clear the buffers, from 6.16-rc6.
    Tsa,
}

/// The cores whose defences were measured instruction by instruction
/// (Behrens, Belay, Kaashoek, "Performance Evolution of Mitigating Transient
/// Execution Attacks", EuroSys 2022: timestamp-counter ticks, each the mean
/// of a million runs, on an E5-2640 v4, an i7-6600U, a Xeon Silver 4210R,
/// a Xeon Gold 6354, a Ryzen 3 1200, an EPYC 7452 and a Ryzen 5 5600X),
/// and the core a profile's part is priced as: its own where it was
/// measured, else the nearest one, which the profile's comment names.
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
    /// Ryzen 3 1200, 3.1 GHz.
    Zen,
    /// EPYC 7452, 2.35 GHz.
    Zen2,
    /// Ryzen 5 5600X, 3.7 GHz: the core Milan shares, and the nearest
    /// measured one to Zen 4.
    Zen3,
}

impl MeasuredCore {
    /// Whether the core is AMD's: the selection differs by vendor
    /// (IBRS on entry and the branch history clear are Intel's; the return
    /// untraining, the safe return and Automatic IBRS AMD's).
    fn is_amd(self) -> bool {
        matches!(
            self,
            MeasuredCore::Zen | MeasuredCore::Zen2 | MeasuredCore::Zen3
        )
    }

    /// One `mov` to CR3 that keeps the TLB (PCID's no-flush bit): the
    /// "swap cr3" column. Not measured where the part is not open to
    /// Meltdown (Cascade Lake, Ice Lake, every AMD core); Skylake's stands
    /// in there, the latest core measured, for a kernel booted with
    /// `pti=on`.
    fn cr3_write_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 206.0,
            _ => 191.0,
        }
    }

    /// VERW with the MD_CLEAR microcode. Ice Lake and the AMD cores are not
    /// open to MDS and were not measured; Cascade Lake's stands in, the
    /// latest core that clears. It stands in too for the VERW that TSA's
    /// microcode makes clear the buffers on Zen 3 and Zen 4, which nobody
    /// has measured: plausibly 50-610 cycles (docs/machines.md §2.2).
    fn verw_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 610.0,
            MeasuredCore::SkylakeClient => 518.0,
            _ => 458.0,
        }
    }

    /// What a generic retpoline adds to one indirect call: a call whose
    /// return address is overwritten, so the return predictor sends the
    /// `ret` to a speculation trap and the core corrects it.
    fn retpoline_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 28.0,
            MeasuredCore::SkylakeClient => 19.0,
            MeasuredCore::CascadeLake => 49.0,
            MeasuredCore::IceLakeServer => 50.0,
            MeasuredCore::Zen => 25.0,
            MeasuredCore::Zen2 => 14.0,
            MeasuredCore::Zen3 => 13.0,
        }
    }

    /// What the LFENCE retpoline (an LFENCE, then the plain indirect call)
    /// adds to one indirect call. Measured on the AMD cores only, the form
    /// not being safe on Intel's; there one LFENCE stands in.
    fn lfence_retpoline_cycles(self) -> f64 {
        match self {
            MeasuredCore::Zen => 28.0,
            MeasuredCore::Zen2 => 0.0,
            MeasuredCore::Zen3 => 18.0,
            _ => self.lfence_cycles(),
        }
    }

    /// One LFENCE in a loop (the lfence table; the paper warns that the
    /// loads in flight change it).
    fn lfence_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 28.0,
            MeasuredCore::SkylakeClient => 20.0,
            MeasuredCore::CascadeLake => 15.0,
            MeasuredCore::IceLakeServer => 13.0,
            MeasuredCore::Zen => 48.0,
            MeasuredCore::Zen2 => 4.0,
            MeasuredCore::Zen3 => 30.0,
        }
    }

    /// One indirect branch prediction barrier (the IBPB table).
    fn ibpb_cycles(self) -> f64 {
        match self {
            MeasuredCore::Broadwell => 5573.0,
            MeasuredCore::SkylakeClient => 4537.0,
            MeasuredCore::CascadeLake => 340.0,
            MeasuredCore::IceLakeServer => 836.0,
            MeasuredCore::Zen => 7370.0,
            MeasuredCore::Zen2 => 1088.0,
            MeasuredCore::Zen3 => 808.0,
        }
    }

    /// clear_bhb_loop on entry: what it added to a will-it-scale futex4
    /// call, at the part's base clock (kernel test robot, reply of
    /// 2024-04-22 to "x86/syscall: Don't force use of indirect calls for
    /// system calls", Message-ID ZiYUpxCTyh1uEgeO@yujie-X299): Ice Lake-SP,
    /// a Xeon Gold 6346 at 3.1 GHz, 7,763,496 to 6,686,457 calls a second
    /// (20.75 ns); Cascade Lake, a Xeon Platinum 8260L at 2.4 GHz, 34 ns.
    /// Cascade Lake's stands in for the earlier cores (a loop of branches,
    /// the same on each), and for an AMD core booted with `spectre_bhi=on`.
    fn bhb_clear_cycles(self) -> f64 {
        match self {
            MeasuredCore::IceLakeServer => (1e9 / 6_686_457.0 - 1e9 / 7_763_496.0) * 3.1,
            _ => 34.0 * 2.4,
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
/// it is open to and which controls it has. The x86 profiles state them;
/// the Arm, POWER and RISC-V profiles state none, as none of their
/// syscall-path defences is priced.
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
    /// On cpu_vuln_blacklist's RETBLEED list (Skylake-derived Intel cores;
    /// AMD Zen 1 and Zen 2).
    pub retbleed: bool,
    /// BHI_CTRL: the kernel sets BHI_DIS_S once instead of clearing the
    /// branch history on every entry.
    pub bhi_ctrl: bool,
    /// Automatic IBRS (CPUID 0x80000021 EAX bit 8, Zen 4): set once in
    /// EFER, as enhanced IBRS is.
    #[serde(default)]
    pub auto_ibrs: bool,
    /// Open to SRSO, "Inception" (the kernel marks X86_BUG_SRSO on AMD
    /// families 0x17 and 0x19, Zen 1 to Zen 4).
    #[serde(default)]
    pub srso: bool,
    /// Open to TSA with the microcode that mitigates it: the kernel marks
    /// X86_BUG_TSA on family 0x19 (Zen 3 and Zen 4) parts that enumerate
    /// neither TSA_SQ_NO nor TSA_L1_NO, and sets VERW_CLEAR where the
    /// microcode revision is at least amd_tsa_microcode's for the model
    /// (arch/x86/kernel/cpu/amd.c, tsa_init). Without that microcode the
    /// kernel reports "Vulnerable: No microcode" and clears nothing.
    #[serde(default)]
    pub tsa: bool,
}

/// spectre_v2_select_mitigation()'s choice on a part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpectreV2 {
    None,
    Retpoline,
    RetpolineLfence,
    Ibrs,
    Eibrs,
}

impl CpuFacts {
    fn is_amd(&self) -> bool {
        self.priced_as.is_amd()
    }

    /// spectre_v2_select_mitigation() under `spectre_v2=auto`, read in
    /// v4.15, v4.19, v5.19, v6.9 and v6.15: enhanced IBRS wherever the part
    /// enumerates it (from 4.19), and AMD's Automatic IBRS taken as it
    /// (from 6.3); else, from 5.19, IBRS on every entry on an Intel part the
    /// kernel marks X86_BUG_RETBLEED (CONFIG_*IBRS_ENTRY, on by default);
    /// else retpolines (spectre_v2_select_retpoline: the generic thunk on
    /// Intel, and on AMD the LFENCE form until 5.17). 6.15 moves the IBRS
    /// choice into spectre_v2_update_mitigation() with the same conditions.
    fn spectre_v2(&self, version: KernelVersion) -> SpectreV2 {
        let amd = self.is_amd();
        if version < RETPOLINE_FROM {
            SpectreV2::None
        } else if (self.eibrs && version >= EIBRS_FROM)
            || (self.auto_ibrs && version >= AUTO_IBRS_FROM)
        {
            SpectreV2::Eibrs
        } else if !amd && self.retbleed && !self.eibrs && version >= IBRS_ENTRY_FROM {
            SpectreV2::Ibrs
        } else if amd && version < GENERIC_RETPOLINE_ON_AMD_FROM {
            SpectreV2::RetpolineLfence
        } else {
            SpectreV2::Retpoline
        }
    }

    /// The defences `version` runs on every syscall of this part, in order.
    pub fn selected(&self, version: KernelVersion) -> Vec<Mitigation> {
        let amd = self.is_amd();
        let spectre_v2 = self.spectre_v2(version);
        let mut applied = Vec::new();
        if self.meltdown && version >= PTI_FROM {
            applied.push(Mitigation::Pti);
        }
        if spectre_v2 == SpectreV2::Ibrs {
            applied.push(Mitigation::Ibrs);
        }
        if version < DIRECT_DISPATCH_FROM {
            match spectre_v2 {
                SpectreV2::Retpoline => applied.push(Mitigation::Retpoline),
                SpectreV2::RetpolineLfence => applied.push(Mitigation::RetpolineLfence),
                SpectreV2::None | SpectreV2::Ibrs | SpectreV2::Eibrs => {}
            }
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
        // controls keep the same default. AMD's cores are on the whitelist
        // with NO_BHI.
        if !amd && version >= BHI_FROM && spectre_v2 != SpectreV2::Retpoline && !self.bhi_ctrl {
            applied.push(Mitigation::Bhi);
        }
        // retbleed_select_mitigation(), v5.19: on an AMD part marked
        // X86_BUG_RETBLEED the default is the untraining (RETBLEED_CMD_AUTO
        // takes UNRET where the kernel has return thunks, as every
        // distribution build does). srso_select_mitigation(), v6.5: on a
        // part marked X86_BUG_SRSO the default is the safe return, whose
        // entry untraining (srso_untrain_ret, or srso_alias_untrain_ret on
        // family 0x19) takes the place of zen_untrain_ret. The kernel skips
        // it on Zen 1 and Zen 2 with SMT off and the microcode in place,
        // which no profile here is.
        let safe_ret = amd && self.srso && version >= SRSO_FROM;
        if amd && self.retbleed && version >= UNRET_FROM && !safe_ret {
            applied.push(Mitigation::UntrainRet);
        }
        if safe_ret {
            applied.push(Mitigation::SafeRet);
        }
        // tsa_select_mitigation(), 6.16-rc6: CONFIG_MITIGATION_TSA's
        // default is the full clear, which sets X86_FEATURE_CLEAR_CPU_BUF,
        // the VERW that MDS uses, on every return to user space. From 6.17
        // the attack-vector controls keep it while user/kernel is
        // mitigated, as it is by default.
        if amd && self.tsa && version >= TSA_FROM {
            applied.push(Mitigation::Tsa);
        }
        applied
    }

    /// What `mitigation` adds to one syscall on this part at `clock_ghz`,
    /// in ns: the measured core's cycles at the profile's clock. `returns`
    /// is how many kernel functions return in one syscall, each of which
    /// the safe return makes the return predictor miss.
    pub fn syscall_ns(&self, mitigation: Mitigation, clock_ghz: f64, returns: f64) -> f64 {
        let core = self.priced_as;
        // The safe return's thunk (a call whose return address is dropped,
        // then a `ret` the return predictor sends elsewhere) is the generic
        // retpoline's sequence, so each return costs what a retpoline adds.
        let forced_miss = core.retpoline_cycles();
        let cycles = match mitigation {
            Mitigation::Ibrs => return IBRS_NS,
            Mitigation::Pti if self.pcid => 2.0 * core.cr3_write_cycles(),
            Mitigation::Pti => 2.0 * core.cr3_write_cycles() + PTI_REFILL_CYCLES,
            Mitigation::Retpoline => core.retpoline_cycles(),
            Mitigation::RetpolineLfence => core.lfence_retpoline_cycles(),
            Mitigation::Mds | Mitigation::Tsa => core.verw_cycles(),
            Mitigation::Bhi => core.bhb_clear_cycles(),
            // zen_untrain_ret: an LFENCE and one return it makes miss; the
            // jump to the return thunk in place of each `ret` is a direct
            // jump the core predicts, not priced.
            Mitigation::UntrainRet => core.lfence_cycles() + forced_miss,
            // Every return, and the entry's untraining: an LFENCE and one
            // more safe return.
            Mitigation::SafeRet => core.lfence_cycles() + (returns + 1.0) * forced_miss,
            Mitigation::IbpbEntry => core.ibpb_cycles(),
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
        auto_ibrs: false,
        srso: false,
        tsa: false,
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
        auto_ibrs: false,
        srso: false,
        tsa: false,
    };
    const SAPPHIRE_RAPIDS: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::IceLakeServer,
        bhi_ctrl: true,
        ..CASCADE_LAKE
    };
    /// EPYC 7002 (Rome): on the Retbleed list and open to SRSO.
    const ZEN2: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::Zen2,
        pcid: false,
        meltdown: false,
        mds: false,
        eibrs: false,
        retbleed: true,
        bhi_ctrl: false,
        auto_ibrs: false,
        srso: true,
        tsa: false,
    };
    /// EPYC 7003 (Milan): open to SRSO only.
    const ZEN3: CpuFacts = CpuFacts {
        priced_as: MeasuredCore::Zen3,
        pcid: true,
        retbleed: false,
        ..ZEN2
    };
    /// EPYC 9004 (Genoa), priced as Zen 3: Automatic IBRS and SRSO.
    const ZEN4: CpuFacts = CpuFacts {
        auto_ibrs: true,
        ..ZEN3
    };
    /// Kernel returns a syscall, as the profiles default.
    const RETURNS: f64 = 16.0;
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
        let ns = |facts: &CpuFacts, m, ghz| facts.syscall_ns(m, ghz, RETURNS);
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
        let refill =
            without.syscall_ns(Pti, 2.0, RETURNS) - SANDY_BRIDGE_EP.syscall_ns(Pti, 2.0, RETURNS);
        assert_eq!(refill, PTI_REFILL_CYCLES / 2.0);
    }

    #[test]
    fn zen_2_untrains_returns_from_5_19_until_the_safe_return_takes_over_in_6_5() {
        // Before 5.17 AMD's retpoline is the LFENCE form; then the generic
        // one, on the syscall table's call until 6.9.
        assert_eq!(ZEN2.selected(v(5, 15)), vec![RetpolineLfence]);
        assert_eq!(ZEN2.selected(v(5, 17)), vec![Retpoline]);
        assert_eq!(ZEN2.selected(v(5, 19)), vec![Retpoline, UntrainRet]);
        assert_eq!(ZEN2.selected(v(6, 4)), vec![Retpoline, UntrainRet]);
        assert_eq!(ZEN2.selected(v(6, 5)), vec![Retpoline, SafeRet]);
        assert_eq!(ZEN2.selected(v(6, 16)), vec![SafeRet]);
        // The Retbleed list means IBRS on entry only on Intel's cores.
        assert!(!ZEN2.selected(v(6, 16)).contains(&Ibrs));
    }

    #[test]
    fn milan_pays_the_safe_return_from_6_5_and_never_the_branch_history_clear() {
        assert_eq!(ZEN3.selected(v(6, 4)), vec![Retpoline]);
        assert_eq!(ZEN3.selected(v(6, 6)), vec![Retpoline, SafeRet]);
        assert_eq!(ZEN3.selected(v(6, 16)), vec![SafeRet]);
    }

    #[test]
    fn genoas_automatic_ibrs_replaces_the_retpoline_from_6_3() {
        assert_eq!(ZEN4.selected(v(6, 2)), vec![Retpoline]);
        assert_eq!(ZEN4.selected(v(6, 3)), vec![]);
        // Enhanced IBRS would call for the branch history clear on Intel
        // from 6.9; AMD is not open to BHI.
        assert_eq!(ZEN4.selected(v(6, 9)), vec![SafeRet]);
    }

    /// Zen 3 with the 2025 microcode whose VERW clears the buffers.
    const ZEN3_TSA: CpuFacts = CpuFacts { tsa: true, ..ZEN3 };

    #[test]
    fn a_zen_3_clears_its_buffers_on_return_from_6_16_rc6_and_not_before() {
        assert_eq!(ZEN3_TSA.selected(v(6, 17)), vec![SafeRet, Tsa]);
        assert_eq!(ZEN3_TSA.selected(v(6, 16)), vec![SafeRet, Tsa]);
        assert_eq!(
            ZEN3_TSA.selected(KernelVersion::candidate(6, 16, 6)),
            vec![SafeRet, Tsa]
        );
        // The private-hash series' 6.16-rc1 predates the clear.
        assert_eq!(
            ZEN3_TSA.selected(KernelVersion::candidate(6, 16, 1)),
            vec![SafeRet]
        );
        assert_eq!(ZEN3_TSA.selected(v(6, 15)), vec![SafeRet]);
        // A part without the microcode, or not open to TSA, clears nothing.
        assert_eq!(ZEN3.selected(v(6, 17)), vec![SafeRet]);
        // TSA is AMD's: an Intel part stating it gets no clear of it.
        let intel = CpuFacts {
            tsa: true,
            ..CASCADE_LAKE
        };
        assert!(!intel.selected(v(6, 17)).contains(&Tsa));
    }

    #[test]
    fn the_tsa_clear_costs_a_verw_at_the_profiles_clock() {
        let at = |ghz| ZEN3_TSA.syscall_ns(Tsa, ghz, RETURNS);
        assert_eq!(at(3.6), 458.0 / 3.6);
        assert!(at(2.25) > at(3.6));
    }

    #[test]
    fn the_safe_return_costs_a_forced_miss_for_every_kernel_return() {
        // Zen 3: an LFENCE of 30 cycles and 17 misses of 13, at 3.7 GHz.
        let at = |returns| ZEN3.syscall_ns(SafeRet, 3.7, returns);
        assert!((at(16.0) - (30.0 + 17.0 * 13.0) / 3.7).abs() < 1e-9);
        // Each return more costs one miss more.
        assert!((at(17.0) - at(16.0) - 13.0 / 3.7).abs() < 1e-9);
        // The untraining alone costs one, whatever the returns.
        assert_eq!(
            ZEN2.syscall_ns(UntrainRet, 2.35, 10.0),
            ZEN2.syscall_ns(UntrainRet, 2.35, 40.0)
        );
        assert_eq!(ZEN2.syscall_ns(UntrainRet, 2.35, 10.0), (4.0 + 14.0) / 2.35);
        // An IBPB on every entry, where a machine is booted with it: Zen
        // 2's barrier, measured at 1088 cycles.
        assert_eq!(ZEN2.syscall_ns(IbpbEntry, 2.0, RETURNS), 544.0);
        // Zen 2 runs the LFENCE retpoline at no cost over a plain call.
        assert_eq!(ZEN2.syscall_ns(RetpolineLfence, 2.35, RETURNS), 0.0);
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

    #[test]
    fn a_release_candidate_comes_after_the_last_release_and_before_its_own() {
        let read = |s: &str| KernelVersion::try_from(s.to_string());
        let rc1 = KernelVersion::candidate(6, 16, 1);
        assert_eq!(read("6.16-rc1"), Ok(rc1));
        assert_eq!(String::from(rc1), "6.16-rc1");
        assert!(v(6, 15) < rc1);
        assert!(rc1 < KernelVersion::candidate(6, 16, 6));
        assert!(KernelVersion::candidate(6, 16, 6) < v(6, 16));
        assert!(read("6.16-rc").is_err());
        assert!(read("6.16-rcx").is_err());
    }
}
