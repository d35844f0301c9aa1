/* SPDX-License-Identifier: MIT */
/*
 * store-testsys.h - a small configfs subsystem for the store tests
 * and benchmarks:
 *
 *   /NAME/                 the subsystem; attribute note (0644)
 *   /NAME/items/           default group; mkdir makes an item
 *   /NAME/items/I/         attributes a, b, c (0644), secret (0200);
 *                          links to any directory are allowed
 *   /NAME/commit/          committable group: pending/ and live/
 *   /NAME/commit/pending/I items of the same type
 *
 * Knobs let a test make stores or mkdirs fail, to stand for a subsystem
 * whose rules changed between runs.
 */
#ifndef STORE_TESTSYS_H
#define STORE_TESTSYS_H

#include <stdbool.h>

struct tsys;

/* Register a subsystem named @name. @return 0 or negative errno. */
int tsys_register(const char *name, struct tsys **ret);

/* Unregister and free (NULL-safe). */
void tsys_unregister(struct tsys *sys);

/* Stores of a value starting with @prefix fail -EINVAL (NULL: none). */
void tsys_refuse_values(struct tsys *sys, const char *prefix);

/* mkdir of a name starting with @prefix fails -ENOSPC (NULL: none). */
void tsys_refuse_names(struct tsys *sys, const char *prefix);

/* Make the next refusal settings apply to every subsystem registered
 * after this call (to refuse during the replay at registration). */
void tsys_default_refusals(const char *values, const char *names);

/* The callbacks every subsystem saw since the last reset, in order:
 * "mkdir:NAME store:VALUE link:TARGET-NAME commit:NAME ..." (stores that
 * were refused are not there). */
const char *tsys_events(void);
void tsys_events_reset(void);

/* Number of items alive (made and not yet released), all subsystems. */
long tsys_items_alive(void);

#endif
