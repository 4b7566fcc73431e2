/** Member roles inside an organization. More roles arrive with identity and access. */
export const MEMBER_ROLES = ['owner', 'admin', 'member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
