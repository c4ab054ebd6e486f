//! The kernel's Jenkins hashes, bit-exact.
