import { ApiProperty } from '@nestjs/swagger';
import type { ReminderView } from '@openbot/features';

export class ReminderBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  chatId!: string;

  @ApiProperty({ description: 'What is posted into the Chat when it is due' })
  message!: string;

  @ApiProperty({ format: 'date-time' })
  dueAt!: string;

  @ApiProperty({ enum: ['pending', 'sent', 'cancelled'] })
  state!: ReminderView['state'];
}

export class ReminderPage {
  @ApiProperty({ type: [ReminderBody] })
  data!: ReminderBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toReminderBody(view: ReminderView): ReminderBody {
  return { id: view.id, chatId: view.chatId, message: view.message, dueAt: new Date(view.dueAt).toISOString(), state: view.state };
}
