/* SPDX-License-Identifier: MIT */
/*
 * probe.h - what configfsd does for process managers: the `probe`
 * subcommand (a container HEALTHCHECK without curl) and systemd's readiness
 * protocol (sd_notify(3), spoken directly: no libsystemd).
 */
#ifndef CFS_PROBE_H
#define CFS_PROBE_H

/** `configfsd probe [--timeout SECONDS] [URL]`, @argv[0] being "probe".
 *  @return the exit code: 0 (2xx), 1 (anything else), 2 (usage). */
int cfs_probe_main(int argc, char **argv);

/** Send @state ("READY=1\nSTATUS=...", "STOPPING=1") to the datagram socket
 *  named by $NOTIFY_SOCKET (a path, or '@' for an abstract name).
 *  @return 1 when sent, 0 when $NOTIFY_SOCKET is not set (not run by a
 *  service manager), or a negative errno. */
int cfs_notify(const char *state);

#endif /* CFS_PROBE_H */
