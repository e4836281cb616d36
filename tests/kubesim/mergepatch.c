/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim merge patch — RFC 7386 (JSON Merge Patch) implementation.
 *
 * Follows the RFC's pseudo code: if the patch is an object, the target
 * becomes an object (a non-object target is discarded), each patch member
 * with a null value deletes the key, every other member is merged
 * recursively; any non-object patch replaces the target with a copy.
 * Arrays are replaced as a whole, never merged.
 */
#include "mergepatch.h"

#include <stddef.h>

static cJSON *merge_member(cJSON *target, const cJSON *member)
{
    cJSON *cur = cJSON_DetachItemFromObjectCaseSensitive(target, member->string);
    cJSON *merged = merge_patch_apply(cur, member);
    if (!merged)
        return NULL;
    cJSON_AddItemToObject(target, member->string, merged);
    return target;
}

cJSON *merge_patch_apply(cJSON *target, const cJSON *patch)
{
    const cJSON *m;

    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(target);
        return cJSON_Duplicate(patch, 1);
    }
    if (!cJSON_IsObject(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateObject();
        if (!target)
            return NULL;
    }
    cJSON_ArrayForEach(m, patch) {
        if (!m->string)
            continue;
        if (cJSON_IsNull(m)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, m->string);
            continue;
        }
        if (!merge_member(target, m)) {
            cJSON_Delete(target);
            return NULL;
        }
    }
    return target;
}
