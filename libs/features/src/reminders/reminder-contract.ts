import { codec, defineWorkflow, type Codec } from '@openbot/engine';

/** What a reminder's delivery is started with by the Turn whose `remind` call set it. */
export interface ReminderInput {
  readonly reminderId: string;
  readonly organizationId: string;
  readonly chatId: string;
  /** When it is due: epoch milliseconds of the engine clock. */
  readonly dueAt: number;
  /** The scope of the Turn that set it: its message is posted as that caller's input would be. */
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string };
}

interface ReminderState extends ReminderInput {
  /** Set once the reminder was posted, found cancelled, or found gone. */
  readonly done: boolean;
  /** How many times in a row its post was refused (nothing left on a budget or the credits); absent on older deliveries: none. */
  readonly refusals?: number;
}

const inputFields = {
  reminderId: codec.string,
  organizationId: codec.string,
  chatId: codec.string,
  dueAt: codec.number,
  scope: codec.object({ kind: codec.oneOf(['member', 'service']), id: codec.string }),
};

/** The delivery of one reminder (APPR-01): one execution per reminder, waiting on a durable timer. */
export const REMINDER = defineWorkflow({
  name: 'chat.reminder',
  // Started only by a Turn, with the Turn's scope and identity (IDN-02, IDN-11).
  audience: 'member',
  input: codec.object(inputFields) satisfies Codec<ReminderInput>,
  state: codec.object({ ...inputFields, done: codec.boolean, refusals: codec.optional(codec.number) }) satisfies Codec<ReminderState>,
  calls: { post: codec.json },
});
