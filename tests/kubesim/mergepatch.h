/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim merge patch — RFC 7386 JSON Merge Patch over cJSON trees.
 *
 * merge_patch_apply() consumes target and returns the patched document:
 * a non-object patch replaces the target, an object patch merges member by
 * member, and a null member removes the key. Standalone (cJSON only).
 */
#ifndef KUBESIM_MERGEPATCH_H
#define KUBESIM_MERGEPATCH_H

#include <cjson/cJSON.h>

/* Returns the new document (possibly target itself), NULL on allocation
 * failure (target is freed in that case). target may be NULL. */
cJSON *merge_patch_apply(cJSON *target, const cJSON *patch);

#endif
