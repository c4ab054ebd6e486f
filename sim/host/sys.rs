//! The two system calls the host measurements need.

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
