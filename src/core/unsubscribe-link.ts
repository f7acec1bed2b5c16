/**
 * The unsubscribe link of a status-change email: GET shows a confirmation page, POST unsubscribes.
 * One spelling for the email sender (workers) and the page that answers it (api).
 */
export const unsubscribeUrl = (publicUrl: string, token: string) => `${publicUrl}/api/v1/unsubscribe/${token}`;

/** The one-click unsubscribe link of a weekly digest email (GET shows a page, POST unsubscribes). */
export const digestUnsubscribeUrl = (publicUrl: string, token: string) => `${publicUrl}/api/v1/unsubscribe/digest/${token}`;
