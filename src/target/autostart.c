/* SPDX-License-Identifier: MIT */
/*
 * Under gtrace record -- cmd, connect before main so early spans count.
 * A file of its own because an agent that links the library into itself
 * (libgtrace-cuda.so, preloaded into every process of the command) leaves
 * it out: there only processes that really use the agent may connect.
 */
#include "target/internal.h"

#include <stdlib.h>

__attribute__((constructor)) static void load(void)
{
	if (getenv(WIRE_SOCKET_ENV))
		tgt_start();
}
