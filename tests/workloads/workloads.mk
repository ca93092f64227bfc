# Bundled workloads with a known shape, for tests, the demo and benchmarks.
# Built in two flavours where it matters: with and without frame pointers.
WORKLOADS =
