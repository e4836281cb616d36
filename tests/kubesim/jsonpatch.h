/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim JSON patch — RFC 6902 (JSON Patch) over cJSON trees, with the
 * apiserver's deviations.
 *
 * json_patch_apply() is called by objects.c for PATCH requests with
 * Content-Type application/json-patch+json (and by the unit tests). It
 * consumes doc (the caller's own copy of the stored object) and returns the
 * patched document, or NULL with a message in err and in *code the HTTP
 * status the apiserver answers: 400 when the patch cannot be decoded (not a
 * JSON array of objects), 413 for more than JSON_PATCH_MAX_OPS operations,
 * 422 when an operation does not apply (a failed "test" included).
 * Nothing is kept between calls; standalone (cJSON only).
 *
 * Operations: add, remove, replace, move, copy, test; JSON pointers with
 * "~0"/"~1" escapes; "-" appends to an array (add, and the destination of
 * move/copy); negative array indexes count from the end. Like the apiserver
 * (and unlike the RFC): "replace" of a missing object member adds it, "add"
 * and "remove" at the root ("") fail, a "copy" from a missing object member
 * copies null, "test" of a missing member passes when the value is null or
 * absent, an "add" without "value" adds null.
 */
#ifndef KUBESIM_JSONPATCH_H
#define KUBESIM_JSONPATCH_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* The apiserver's cap on the number of operations (more: 413). */
#define JSON_PATCH_MAX_OPS 10000

cJSON *json_patch_apply(cJSON *doc, const cJSON *patch, int *code, char *err,
                        size_t errlen);

#endif
