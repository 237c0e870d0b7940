# The sysroot fixtures hold absolute symbolic links (/opt/rocm -> /etc/alternatives/rocm,
# lib/modules/K/build -> /usr/src/linux-headers-K) that point at the *host* when followed from
# outside the probe: pytest must not walk into them looking for tests.
collect_ignore_glob = ["*"]
