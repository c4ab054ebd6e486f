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

/// The futex syscall with FUTEX_PRIVATE_FLAG where `private`; the errno
/// is read right after it, where the return value is -1.
fn futex(
    word: &AtomicU32,
    op: libc::c_int,
    private: bool,
    val: u32,
    val2: usize,
    word2: Option<&AtomicU32>,
    val3: u32,
) -> FutexResult {
    let op = op | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    let word2 = word2.map_or(std::ptr::null_mut(), |w| w.as_ptr());
    // SAFETY: both addresses are live, aligned u32s (or null where the op
    // takes no second word) for the whole call; `val2` is a count or null
    // timeout, never a pointer the kernel writes through.
    let ret = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, val2, word2, val3) };
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(ret as u64)
    }
}

/// What a futex call returned: its count, or the errno it failed with.
pub type FutexResult = std::io::Result<u64>;

/// FUTEX_WAKE of up to `nr` waiters on `word`: how many it woke.
pub fn futex_wake(word: &AtomicU32, nr: u32, private: bool) -> FutexResult {
    futex(word, libc::FUTEX_WAKE, private, nr, 0, None, 0)
}

/// FUTEX_CMP_REQUEUE: wakes `nr_wake` waiters of `from` and moves up to
/// `nr_requeue` more to `to`, if `from` still holds `expected`; how many it
/// woke and moved.
pub fn futex_cmp_requeue(
    from: &AtomicU32,
    expected: u32,
    to: &AtomicU32,
    nr_wake: u32,
    nr_requeue: u32,
    private: bool,
) -> FutexResult {
    futex(
        from,
        libc::FUTEX_CMP_REQUEUE,
        private,
        nr_wake,
        nr_requeue as usize,
        Some(to),
        expected,
    )
}

/// FUTEX_CMP_REQUEUE_PI: the top waiter of `from` takes the PI futex `to`
/// if it is free (the kernel wakes at most one), the next `nr_requeue`
/// wait on it; how many were woken and moved.
pub fn futex_cmp_requeue_pi(
    from: &AtomicU32,
    expected: u32,
    to: &AtomicU32,
    nr_requeue: u32,
    private: bool,
) -> FutexResult {
    futex(
        from,
        libc::FUTEX_CMP_REQUEUE_PI,
        private,
        1,
        nr_requeue as usize,
        Some(to),
        expected,
    )
}

/// FUTEX_WAIT_REQUEUE_PI: waits on `from` (holding `expected`) until
/// requeued to the PI futex `to` and given it; Ok means `to` is now held.
pub fn futex_wait_requeue_pi(
    from: &AtomicU32,
    expected: u32,
    to: &AtomicU32,
    private: bool,
) -> FutexResult {
    futex(
        from,
        libc::FUTEX_WAIT_REQUEUE_PI,
        private,
        expected,
        0,
        Some(to),
        0,
    )
}

/// FUTEX_LOCK_PI on `word`, no timeout: Ok once this thread holds it.
pub fn futex_lock_pi(word: &AtomicU32, private: bool) -> FutexResult {
    futex(word, libc::FUTEX_LOCK_PI, private, 0, 0, None, 0)
}

/// FUTEX_UNLOCK_PI on `word`, which this thread holds.
pub fn futex_unlock_pi(word: &AtomicU32, private: bool) -> FutexResult {
    futex(word, libc::FUTEX_UNLOCK_PI, private, 0, 0, None, 0)
}

/// FUTEX_WAIT on `word` expecting `expected`, no timeout: Ok once woken,
/// EAGAIN at once when the word holds another value.
pub fn futex_wait(word: &AtomicU32, expected: u32, private: bool) -> FutexResult {
    futex(word, libc::FUTEX_WAIT, private, expected, 0, None, 0)
}
