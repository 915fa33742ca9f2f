// What of a status message must be published again when it changes. A watcher re-derives the status on
// every event; the kubelet rewrites a failing pod's state at every back-off, so the message of one and the
// same condition keeps changing in ways that say nothing new: restart counts, back-off seconds, "3 of 5".
// A different condition (another reason, another container or pod, a new stage of a rollout, a different
// scheduler complaint) still changes the key.

/**
 * The kubelet alternates ErrImagePull (the pull error) and ImagePullBackOff ("Back-off pulling image …") for
 * one failing pull, each with its own text, up to the next "; " of a workload message: one key for both.
 * The cost: a pull error changing cause while it keeps failing (not found → unauthorized) is only seen with
 * the next other change.
 */
const IMAGE_PULL = /\b(?:ErrImagePull|ImagePullBackOff)\b(?::[^;]*)?/g

/** Maps a status message to the part that identifies its condition: equal keys, nothing new to publish. */
export function messageKey(message: string): string {
  return message.replace(IMAGE_PULL, 'ImagePullBackOff').replace(/\d+/g, '#')
}
