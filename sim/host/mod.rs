//! Measurements of the machine futexsim runs on: real futex syscalls and
//! real cache-line transfers between pinned threads, to set a machine
//! profile from (calibrate) and to hold the model's predictions against
//! (native).

pub mod calibrate;
pub mod compare;
pub mod measure;
pub mod native;
mod sys;
pub mod topology;

pub use sys::kernel_release;
