/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_SYMBOLS_H
#define GTRACE_CONTRACT_SYMBOLS_H

/*
 * Names the recorder makes up for code that has none. A stripped
 * function is named after its dso and the first address of the unwind
 * entry that covers it, "libcuda.so.1@0x4585a0" (src/symbols/symbols.c):
 * one row for the function's samples, but no name a reader could look up,
 * so diagnose counts such leaves apart from those a symbol named.
 */
#define SYMBOL_UNWIND_ENTRY_MARK "@0x"

#endif
