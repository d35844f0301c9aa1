/* SPDX-License-Identifier: MIT */
/*
 * samples.h - the built-in sample subsystems of docs/DESIGN.md §2:
 * 01-childless, 02-simple-children, 03-group-children and
 * 04-committable-children, registered unless configfsd --no-samples.
 */
#ifndef CFS_SAMPLES_H
#define CFS_SAMPLES_H

/**
 * Register the four sample subsystems: all of them, or none.
 * Call from one thread (start-up), after nothing else registered them.
 * @return 0; -EEXIST if they are already registered (or a subsystem of
 * the same name is); an errno of configfs_register_subsystem().
 */
int cfs_samples_register(void);

/** Unregister them, with everything made in them (T7). Does nothing if
 *  they are not registered. Call from one thread (shutdown). */
void cfs_samples_unregister(void);

#endif /* CFS_SAMPLES_H */
