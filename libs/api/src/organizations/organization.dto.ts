import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength, Matches } from 'class-validator';

export class CreateOrganizationBody {
  @ApiProperty({ example: 'Acme', minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;
}

export class OrganizationBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;
}

export class OrganizationListItem extends OrganizationBody {
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class OrganizationPage {
  @ApiProperty({ type: [OrganizationListItem] })
  data!: OrganizationListItem[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export class OwnerMemberBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['owner'] })
  role!: 'owner';
}

export class NewApiKeySecretBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'Shown once; only its hash is stored' })
  secret!: string;
}

export class CreatedOrganizationBody {
  @ApiProperty({ type: OrganizationBody })
  organization!: OrganizationBody;

  @ApiProperty({ type: OwnerMemberBody })
  member!: OwnerMemberBody;

  @ApiProperty({ type: NewApiKeySecretBody })
  apiKey!: NewApiKeySecretBody;
}
