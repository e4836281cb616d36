/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hosts.h — the hosts plugin's re-read step, outside its reload thread.
 *
 * hosts_reread(inst) does what the reload thread does once it has seen the
 * file change: build a new table from the file (an empty one when the file
 * is missing or unreadable) and the inline entries, publish it for the
 * serving workers, wait for a grace period (no worker still reads the old
 * table) and free the old table. The caller must be a registered RCU
 * reader thread outside any read-side section. inst is the
 * plugin's instance (the hosts handler's inst, owned by the server
 * instance). The reload thread calls it; so does the fuzz harness
 * (tests/fuzz/fuzz_hosts.c), from its one thread and with `reload 0` (no
 * reload thread), to feed each input through this path. Never call it
 * while that instance's reload thread runs.
 */
#ifndef TOPODNS_HOSTS_H
#define TOPODNS_HOSTS_H

void hosts_reread(void *inst);

#endif
