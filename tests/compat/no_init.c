// SPDX-License-Identifier: MIT
/*
 * no_init.c - a shared object built against the compat headers without
 * module_init: not a module, so loading it fails with ENOEXEC.
 */
#include <linux/kernel.h>

int no_init_answer(void);

int no_init_answer(void)
{
    return 42;
}
