import { Type } from './typebox.js';
import type { Static } from 'typebox';
import { AbsoluteUrlSchema } from './common.js';

export const LinkSchema = Type.Object(
  {
    rel: Type.String({ description: 'IANA link relation name, or an absolute URL for an extension relation.' }),
    href: AbsoluteUrlSchema,
    type: Type.Optional(Type.String({ description: 'Media type of the target.' })),
    title: Type.String(),
  },
  { additionalProperties: false },
);

export const ResourcesSchema = Type.Object(
  { links: Type.Array(LinkSchema) },
  {
    $id: 'ResourceLinks',
    title: 'ResourceLinks',
    description: 'Official links of this service, for agents.',
    additionalProperties: false,
  },
);
export type Resources = Static<typeof ResourcesSchema>;
