/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fixture.h — the cluster the fuzz harnesses that serve cluster names work
 * on (fuzz_kube, fuzz_http): every object of tests/data/kubernetes/cluster.json
 * and zonal.json (JSON lists) and of tests/data/topology/cluster.yaml (the
 * three-zone cluster with nodes and client pods), found under SRCDIR (the
 * source tree, compiled in), written into a store. A fixture object the
 * store refuses aborts: the harness would test less than it says.
 *
 * Called once per process by the harness that owns the store; allocates
 * nothing that outlives the call except what the store keeps.
 */
#ifndef TOPODNS_FUZZ_FIXTURE_H
#define TOPODNS_FUZZ_FIXTURE_H

#include "cluster/store.h"

void fuzz_fixture_load(store *st);

#endif
