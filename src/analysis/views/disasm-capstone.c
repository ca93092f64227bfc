/* SPDX-License-Identifier: MIT */
/* disasm.h through libcapstone. */
#include "analysis/views/disasm.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>

#include "util/xalloc.h"

struct disasm {
	csh handle;
	cs_insn *insn;		/* cs_disasm_iter's one instruction, reused */
};

bool disasm_available(void)
{
	return true;
}

int disasm_open(struct disasm **d, uint32_t machine)
{
	cs_arch arch;
	cs_mode mode;
	csh handle;

	if (machine == EM_X86_64) {
		arch = CS_ARCH_X86;
		mode = CS_MODE_64;
	} else if (machine == EM_AARCH64) {
		arch = CS_ARCH_ARM64;
		mode = CS_MODE_ARM;
	} else {
		*d = NULL;
		return -ENOTSUP;
	}
	if (cs_open(arch, mode, &handle) != CS_ERR_OK) {
		*d = NULL;
		return -ENOTSUP;
	}
	*d = xcalloc(1, sizeof(**d));
	(*d)->handle = handle;
	(*d)->insn = cs_malloc(handle);
	return 0;
}

size_t disasm_one(struct disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		  char *text, size_t size)
{
	const uint8_t *at = code;
	size_t left = len;
	uint64_t pc = addr;

	if (!d->insn || !cs_disasm_iter(d->handle, &at, &left, &pc, d->insn))
		return 0;
	snprintf(text, size, "%s%s%s", d->insn->mnemonic, d->insn->op_str[0] ? " " : "",
		 d->insn->op_str);
	return d->insn->size;
}

void disasm_close(struct disasm *d)
{
	if (!d)
		return;
	if (d->insn)
		cs_free(d->insn, 1);
	cs_close(&d->handle);
	free(d);
}
