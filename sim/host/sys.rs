//! The system calls the host measurements need.

use std::sync::atomic::AtomicU32;

/// Pins the calling thread to `cpu`; false when the CPU is not usable.
pub fn pin_to(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and CPU_SET writes
    // inside it for any cpu below CPU_SETSIZE, checked first.
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// FUTEX_WAIT on `word` expecting `expected`, no timeout; the return value
/// of the syscall (-1 with EAGAIN when the word holds another value).
pub fn futex_wait(word: &AtomicU32, expected: u32, private: bool) -> libc::c_long {
    let op = libc::FUTEX_WAIT | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: the address is a live, aligned u32 for the whole call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    }
}

pub fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// prctl(PR_FUTEX_HASH, ...) (since Linux 6.16): the process's private
/// futex hash. Older kernels answer EINVAL.
const PR_FUTEX_HASH: libc::c_int = 78;
const PR_FUTEX_HASH_SET_SLOTS: libc::c_ulong = 1;
const PR_FUTEX_HASH_GET_SLOTS: libc::c_ulong = 2;

/// Asks for a private futex hash of `slots` buckets (0: the global hash).
pub fn set_futex_hash_slots(slots: u32) -> std::io::Result<()> {
    // SAFETY: PR_FUTEX_HASH takes integer arguments only.
    let ret = unsafe {
        libc::prctl(
            PR_FUTEX_HASH,
            PR_FUTEX_HASH_SET_SLOTS,
            libc::c_ulong::from(slots),
            0 as libc::c_ulong,
        )
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The process's private futex hash size: Some(0) for the global hash,
/// None when the kernel cannot say (before 6.16).
pub fn futex_hash_slots() -> Option<u32> {
    // SAFETY: PR_FUTEX_HASH_GET_SLOTS takes no pointer.
    let ret = unsafe { libc::prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS) };
    u32::try_from(ret).ok()
}

/// The CPUs this process may run on (its affinity mask), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // writes at most its size, and CPU_ISSET reads inside it for every
    // cpu below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..online_cpus()).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// The cheapest system call there is, for the cost of entering and
/// leaving the kernel: getppid does no work but read a field.
pub fn bare_syscall() -> libc::c_long {
    // SAFETY: getppid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getppid) }
}

/// The host's page size in bytes (4096 where sysconf cannot say).
pub fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the running system and touches no memory of ours.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

/// The running kernel's release, as `uname -r` prints it; None where
/// uname fails or the release is not UTF-8.
pub fn kernel_release() -> Option<String> {
    // SAFETY: a zeroed utsname is valid for uname to fill; uname writes
    // NUL-terminated strings inside it, so CStr reads within `release`.
    unsafe {
        let mut names: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut names) != 0 {
            return None;
        }
        std::ffi::CStr::from_ptr(names.release.as_ptr())
            .to_str()
            .ok()
            .map(str::to_string)
    }
}
