// SPDX-License-Identifier: MIT
/*
 * module.c - loading client modules (shared objects built against
 * core/compat). Being written; until it lands every load fails ENOSYS.
 */
#include "internal.h"

int cfs_module_load(const char *path, struct module **ret_module)
{
    (void)path;
    (void)ret_module;
    return -ENOSYS;
}

int cfs_module_unload(struct module *module)
{
    (void)module;
    return -ENOSYS;
}

void cfs_module_unload_all(void)
{
}
