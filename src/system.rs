//! The machine's context for a record: host name, kernel, memory, and the filesystem and
//! device under a directory (from /proc/self/mountinfo and /sys/dev/block).
